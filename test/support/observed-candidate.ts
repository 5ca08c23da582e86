/**
 * One LeaderElector on a real Lease, authenticated as a test identity, reporting to an
 * ElectionObserver — what the observability integration tests elect with.
 */
import type { ElectionObserver, ElectionLogger } from 'nest-leader';
import { LeaderElector, LeaseLock } from 'nest-leader/core';
import { RecordingLogger } from 'nest-leader/testing';
import { kubeConfigFor } from './cluster.js';
import { FAST_TIMINGS } from './candidates.js';
import type { ClusterInfo } from './control-plane.js';

/** Options of {@link observedElector}. */
export interface ObservedElectorOptions {
  /** The candidate's identity (holderIdentity); default the test identity it authenticates as. */
  identity?: string;
  /** Where the elector logs; default a fresh RecordingLogger. */
  logger?: ElectionLogger;
  releaseOnStop?: boolean;
  /** Awaited by the elector when a term ends, before it releases or campaigns again. */
  onStoppedLeading?: () => Promise<void>;
}

/**
 * An elector on Lease `leaseName` (FAST_TIMINGS), authenticated as test identity `user`,
 * reporting to `observer` under the election name `leaseName`.
 */
export function observedElector(
  cluster: ClusterInfo,
  leaseName: string,
  user: string,
  observer: ElectionObserver,
  options: ObservedElectorOptions = {},
): LeaderElector {
  const identity = options.identity ?? user;
  return new LeaderElector({
    lock: new LeaseLock({
      kubeConfig: kubeConfigFor(cluster, user),
      name: leaseName,
      namespace: cluster.namespace,
      identity,
    }),
    identity,
    name: leaseName,
    ...FAST_TIMINGS,
    releaseOnStop: options.releaseOnStop ?? true,
    logger: options.logger ?? new RecordingLogger(),
    observer,
    callbacks: { onStoppedLeading: options.onStoppedLeading },
  });
}
