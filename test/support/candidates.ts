/**
 * Several LeaderElectors on one real Lease, each with its own credentials, plus what the tests
 * and benchmarks observe of them: who started leading when, what they logged.
 */
import type { LeaderElectionTimings, LeaderTerm } from 'nest-leader';
import { LeaderElector, LeaseLock } from 'nest-leader/core';
import { type RecordedLogLine, RecordingLogger } from 'nest-leader/testing';
import type { ClusterInfo } from './control-plane.js';
import { kubeConfigFor } from './cluster.js';
import { eventually, found } from './eventually.js';

/** Short timings for tests: leaseDuration 4 s, renewDeadline 3 s, retryPeriod 1 s. */
export const FAST_TIMINGS: LeaderElectionTimings = {
  leaseDurationSeconds: 4,
  renewDeadlineSeconds: 3,
  retryPeriodSeconds: 1,
};

/** One leadership event seen by a candidate, with the local monotonic time in ms. */
export interface LeadershipRecord {
  identity: string;
  event: 'started' | 'stopped';
  atMs: number;
  leaseTransitions: number;
}

/** A candidate of the test: an elector plus what it logged. */
export interface Candidate {
  identity: string;
  elector: LeaderElector;
  logs: RecordedLogLine[];
}

export interface CandidateOptions {
  releaseOnStop?: boolean;
  timings?: LeaderElectionTimings;
  /** KubeConfig of this identity; default the identity's own from the cluster. */
  kubeconfigIdentity?: string;
}

/**
 * Creates (not starts) one elector per identity on Lease `leaseName`, each authenticated as
 * itself. All leadership events go to `history` in order.
 */
export function makeCandidates(
  cluster: ClusterInfo,
  leaseName: string,
  identities: readonly string[],
  history: LeadershipRecord[],
  options: CandidateOptions = {},
): Candidate[] {
  return identities.map((identity) => {
    const logger = new RecordingLogger();
    const logs = logger.lines;
    const note = (event: LeadershipRecord['event'], term: LeaderTerm): void => {
      history.push({
        identity,
        event,
        atMs: performance.now(),
        leaseTransitions: term.leaseTransitions,
      });
    };
    const elector = new LeaderElector({
      lock: new LeaseLock({
        kubeConfig: kubeConfigFor(cluster, options.kubeconfigIdentity ?? identity),
        name: leaseName,
        namespace: cluster.namespace,
        identity,
      }),
      identity,
      ...(options.timings ?? FAST_TIMINGS),
      releaseOnStop: options.releaseOnStop ?? true,
      logger,
      callbacks: {
        onStartedLeading: (term) => note('started', term),
        onStoppedLeading: (term) => note('stopped', term),
      },
    });
    return { identity, elector, logs };
  });
}

/** Resolves with the first candidate that leads, polling every 10 ms; rejects after `timeoutMs`. */
export async function waitForLeader(
  candidates: readonly Candidate[],
  timeoutMs: number,
  exclude?: Candidate,
): Promise<Candidate> {
  return eventually(
    () =>
      found(
        candidates.find((c) => c !== exclude && c.elector.isLeader()),
        () => `no leader among ${candidates.map((c) => c.identity)} after ${timeoutMs} ms`,
      ),
    { timeoutMs, intervalMs: 10 },
  );
}

/**
 * Samples `isLeader()` of every candidate every `intervalMs` until stopped; records every
 * instant at which more than one believed it led.
 */
export function watchSingleLeader(candidates: readonly Candidate[], intervalMs = 20) {
  const violations: { atMs: number; leaders: string[] }[] = [];
  let samples = 0;
  const timer = setInterval(() => {
    samples++;
    const leaders = candidates.filter((c) => c.elector.isLeader()).map((c) => c.identity);
    if (leaders.length > 1) violations.push({ atMs: performance.now(), leaders });
  }, intervalMs);
  return {
    violations,
    get samples() {
      return samples;
    },
    stop: () => clearInterval(timer),
  };
}

/** Median and maximum of `values` (ms), rounded. */
export function summarize(values: readonly number[]): {
  n: number;
  medianMs: number;
  maxMs: number;
} {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { n: sorted.length, medianMs: Math.round(median), maxMs: Math.round(sorted.at(-1)!) };
}
