/** Fixed parts of the demo: schedules and DI tokens. What varies per deployment is in demo.config.ts. */

/** Injection token of the validated {@link DemoConfig}. */
export const DEMO_CONFIG = Symbol('DEMO_CONFIG');

/** The scheduler dispatches jobs every 2 seconds (a six-field cron: seconds first). */
export const DISPATCH_CRON = '*/2 * * * * *';

/**
 * The demo's sharded election: the order reconciler's {@link ORDER_SHARDS} shards, spread over
 * every replica (each shard owned by one replica at a time), coordinated on the Lease
 * `SHARD_LEASE_NAME`. Runs only on a Kubernetes Lease lock.
 */
export const SHARDED_ELECTION = 'orders';

/** Number of shards of {@link SHARDED_ELECTION}: every replica owns ⌊16/R⌋ or ⌈16/R⌉ of them. */
export const ORDER_SHARDS = 16;

/** The reconciler runs every second. */
export const RECONCILE_INTERVAL_MS = 1000;

/** How long one simulated dispatch takes: long enough that shutdown has something to drain. */
export const SIMULATED_DISPATCH_MS = 150;
