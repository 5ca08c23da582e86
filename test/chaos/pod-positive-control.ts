/**
 * The positive control of `pnpm chaos --cluster`: the deliberately unsafe candidate
 * (`test/support/unsafe-candidate.ts`, through the one candidate harness) joins the demo pods'
 * own Lease as an extra OS process on the node's host. Its wall clock reads 2 × leaseDuration
 * ahead, so by the remote renewTime it finds the pods' Lease expired and takes it at once; it is
 * then SIGSTOPped until a pod leads again and woken: it works on its belief until its next read
 * of the Lease. The checker must report that work beside the pod's term.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeCluster } from '@nest-leader/demo/launcher/node-cluster';
import { CandidateProcess } from '../support/candidate-process.js';
import type { CandidateLog } from './candidate-logs.js';
import type { PodChaosTimings } from './pod-fault-kinds.js';

/** The unsafe candidate's holderIdentity on the pods' Lease. */
export const UNSAFE_IDENTITY = 'unsafe-intruder';

/** What the control did: the unsafe candidate's events and the round's times (wall ms). */
export interface UnsafeIntruderRound {
  log: CandidateLog;
  startAt: number;
  endAt: number;
  /** When it was SIGSTOPped and SIGCONTed (wall ms). */
  pausedAt: number;
  resumedAt: number;
}

/**
 * Runs the control against Lease `leaseName` in `namespace` (admin credentials of the node
 * cluster). `podTookOver(token)` resolves once a pod works in a term after `token`.
 * @throws Error when the unsafe candidate never takes the Lease or no pod takes it back.
 */
export async function runUnsafeIntruder(options: {
  cluster: NodeCluster;
  namespace: string;
  leaseName: string;
  timings: PodChaosTimings;
  podTookOver: (token: number) => Promise<unknown>;
}): Promise<UnsafeIntruderRound> {
  const { timings } = options;
  const startAt = Date.now();
  const intruder = await CandidateProcess.start({
    implementation: 'unsafe',
    identity: UNSAFE_IDENTITY,
    timings: {
      leaseDurationSeconds: timings.leaseDurationMs / 1000,
      renewDeadlineSeconds: timings.renewDeadlineMs / 1000,
      retryPeriodSeconds: timings.retryPeriodMs / 1000,
    },
    kubeconfigPath: options.cluster.kubeconfig,
    leaseName: options.leaseName,
    namespace: options.namespace,
    releaseOnCancel: false,
    extraArgs: ['--clock-skew-ms', String(2 * timings.leaseDurationMs)],
  });
  try {
    const started = await intruder.waitFor(
      (e) => e.event === 'started',
      timings.leaseDurationMs + 30_000,
      'the unsafe candidate took the Lease',
    );
    // Let it work a little as the holder, then freeze it past the lease.
    await sleep(2 * timings.retryPeriodMs);
    const pausedAt = Date.now();
    intruder.pause();
    try {
      await options.podTookOver(started.leaseTransitions!);
    } finally {
      intruder.resume();
    }
    const resumedAt = Date.now();
    // It acts on waking, until its next read of the Lease shows the pod.
    await sleep(2 * timings.retryPeriodMs + 1000);
    return {
      log: { identity: UNSAFE_IDENTITY, events: [...intruder.events] },
      startAt,
      endAt: Date.now(),
      pausedAt,
      resumedAt,
    };
  } finally {
    await intruder.dispose();
  }
}
