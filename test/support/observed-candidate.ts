/**
 * One LeaderElector on a real Lease, authenticated as a test identity, reporting to an
 * ElectionObserver — what the observability integration tests elect with.
 */
import { type ElectionObserver, type ElectionLogger, LeaderElector, LeaseLock } from 'nest-leader';
import { kubeConfigFor } from './cluster.js';
import { FAST_TIMINGS } from './candidates.js';
import type { ClusterInfo } from './control-plane.js';

/** Log lines of one candidate, as `LEVEL message`. */
export type LogLines = string[];

/** A logger that keeps every line in `lines`. */
export function recordingLogger(lines: LogLines): ElectionLogger {
  return {
    debug: (m) => lines.push(`DEBUG ${m}`),
    info: (m) => lines.push(`INFO ${m}`),
    warn: (m) => lines.push(`WARN ${m}`),
    error: (m) => lines.push(`ERROR ${m}`),
  };
}

/** Options of {@link observedElector}. */
export interface ObservedElectorOptions {
  /** The candidate's identity (holderIdentity); default the test identity it authenticates as. */
  identity?: string;
  logs?: LogLines;
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
    logger: recordingLogger(options.logs ?? []),
    observer,
    callbacks: { onStoppedLeading: options.onStoppedLeading },
  });
}
