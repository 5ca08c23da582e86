/** Fixed parts of the demo: schedules and DI tokens. What varies per deployment is in demo.config.ts. */

/** Injection token of the validated {@link DemoConfig}. */
export const DEMO_CONFIG = Symbol('DEMO_CONFIG');

/** The scheduler dispatches jobs every 2 seconds (a six-field cron: seconds first). */
export const DISPATCH_CRON = '*/2 * * * * *';

/**
 * The demo's second election: the shard reconciler leads on its own Lease
 * (`SHARD_LEASE_NAME`), independently of the default election's scheduler and reconciler.
 */
export const SHARD_ELECTION = 'shard-a';

/** The reconciler runs every second. */
export const RECONCILE_INTERVAL_MS = 1000;

/** How long one simulated dispatch takes: long enough that shutdown has something to drain. */
export const SIMULATED_DISPATCH_MS = 150;
