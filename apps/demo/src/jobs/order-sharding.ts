/**
 * Whether this replica runs the sharded election `orders`: sharding needs Leases it can list and
 * watch, so it runs only when the demo's lock is a Kubernetes Lease (`LEADER_LOCK=kubernetes`, or
 * `auto` finding a cluster). With the file lock the demo runs without it and says so.
 */
import { selectLock } from 'nest-leader/core';
import type { DemoConfig } from '../demo.config.js';

/** The decision, and why sharding is off when it is. */
export type OrderSharding = { enabled: true } | { enabled: false; reason: string };

/** Decides from the configured lock, as the library will resolve it. Never throws. */
export function orderSharding(config: DemoConfig): OrderSharding {
  if (config.lock === 'kubernetes') return { enabled: true };
  if (config.lock === 'file') {
    return {
      enabled: false,
      reason: 'LEADER_LOCK=file: sharded elections need a Kubernetes Lease',
    };
  }
  try {
    const { kind } = selectLock({
      lock: 'auto',
      leaseName: config.leaseName,
      namespace: config.namespace,
    });
    return kind === 'kubernetes'
      ? { enabled: true }
      : {
          enabled: false,
          reason: `LEADER_LOCK=auto chose the ${kind} lock (no cluster configured): sharded elections need a Kubernetes Lease`,
        };
  } catch (error) {
    // The default election builds the same lock and reports this error itself.
    return {
      enabled: false,
      reason: `LEADER_LOCK=auto found no usable cluster: ${(error as Error).message}`,
    };
  }
}
