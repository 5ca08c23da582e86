/**
 * Failover latency on the real kube-apiserver: 3 candidates on one Lease with FAST_TIMINGS;
 * the leader is stopped and we time until another candidate's `onStartedLeading`.
 *
 * - crash: the leader stops without releasing (`releaseOnStop: false`), as after kill -9;
 *   followers take over when the Lease expires by their own observation.
 * - release: the leader stops with release (holder cleared); followers take it at their next
 *   acquire attempt.
 */
import {
  FAST_TIMINGS,
  makeCandidates,
  waitForLeader,
  watchSingleLeader,
  type Candidate,
  type CandidateOptions,
  type LeadershipRecord,
} from '@nest-leader/test/support/candidates.js';
import { uniqueLeaseName } from '@nest-leader/test/support/cluster.js';
import type { ClusterInfo } from '@nest-leader/test/support/control-plane.js';
import { ACQUIRE_JITTER } from 'nest-leader/core';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { withControlPlane } from './support/control-plane.js';
import { writeResults } from './support/results.js';
import { sleep } from './support/sleep.js';
import { describeMs, type MsDistribution } from './support/stats.js';

const IDENTITIES = ['alice', 'bob', 'carol'] as const;
const TIMINGS = FAST_TIMINGS;
const LEASE_MS = TIMINGS.leaseDurationSeconds * 1000;
const RETRY_MS = TIMINGS.retryPeriodSeconds * 1000;
/** Longest acquire retry interval: retryPeriod × (1 + ACQUIRE_JITTER). */
const MAX_RETRY_MS = RETRY_MS * (1 + ACQUIRE_JITTER);

type Scenario = 'crash' | 'release';

/** One handover. Times are local monotonic ms. */
interface FailoverRound {
  round: number;
  from: string;
  to: string;
  /** From calling `stop()` on the leader to another candidate's `onStartedLeading`. */
  failoverMs: number;
  /** How long `stop()` took (release: includes the GET + PUT that clears the holder). */
  stopMs: number;
  /** leaseTransitions of the new term. */
  leaseTransitions: number;
}

interface ScenarioResult {
  scenario: Scenario;
  /** Upper bound from the algorithm, without request latency. */
  boundMs: number;
  bound: string;
  /**
   * Lower bound from the algorithm. Crash: followers time the expiry from when they last SAW
   * the Lease change, up to one retry interval after the renewal, and the crash comes less
   * than a retryPeriod after it: > leaseDuration − retryPeriod. Release: 0.
   */
  lowerBoundMs: number;
  failover: MsDistribution;
  withinBound: number;
  stop: MsDistribution;
  rounds: FailoverRound[];
  /** Instants (sampled every 20 ms) at which two candidates believed they led. */
  singleLeaderViolations: number;
  singleLeaderSamples: number;
}

export const failoverBench: Benchmark = {
  name: 'failover',
  description: 'leader crash / release → next onStartedLeading, 3 candidates, real API server',
  settings: ['rounds'],
  async run(settings: BenchSettings, command: string): Promise<void> {
    const results = await withControlPlane(IDENTITIES, async (cluster) => {
      const crash = await measureScenario(cluster, 'crash', settings.rounds);
      const release = await measureScenario(cluster, 'release', settings.rounds);
      return [crash, release];
    });
    const summary = summarize(results, settings.rounds);
    const path = writeResults({
      benchmark: 'failover',
      measures:
        'time from stopping the leader (without / with release) to another candidate starting to lead',
      command,
      parameters: {
        candidates: IDENTITIES,
        timings: TIMINGS,
        rounds: settings.rounds,
        acquireJitter: `retryPeriod × [1, ${1 + ACQUIRE_JITTER})`,
      },
      results: { scenarios: results },
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`  → ${path}`);
  },
};

async function measureScenario(
  cluster: ClusterInfo,
  scenario: Scenario,
  rounds: number,
): Promise<ScenarioResult> {
  const leaseName = uniqueLeaseName(`bench-failover-${scenario}`);
  const history: LeadershipRecord[] = [];
  const options: CandidateOptions = { releaseOnStop: scenario === 'release', timings: TIMINGS };
  const candidates: Candidate[] = makeCandidates(cluster, leaseName, IDENTITIES, history, options);
  const boundMs = scenario === 'crash' ? LEASE_MS + MAX_RETRY_MS : MAX_RETRY_MS;
  const watch = watchSingleLeader(candidates);
  const measured: FailoverRound[] = [];
  try {
    for (const candidate of candidates) candidate.elector.start();
    await waitForLeader(candidates, 30_000);
    for (let round = 1; round <= rounds; round++) {
      // Let every follower observe the leader's renewals, and crash at a random phase of the
      // renew cycle (the crash figure depends on it).
      await sleep(2 * RETRY_MS + Math.random() * RETRY_MS);
      const leader = await waitForLeader(candidates, 30_000);
      const stoppedAtMs = performance.now();
      await leader.elector.stop();
      const stopMs = performance.now() - stoppedAtMs;
      const next = await nextStart(history, leader.identity, stoppedAtMs, boundMs + 10_000);
      measured.push({
        round,
        from: leader.identity,
        to: next.identity,
        failoverMs: round1(next.atMs - stoppedAtMs),
        stopMs: round1(stopMs),
        leaseTransitions: next.leaseTransitions,
      });
      process.stdout.write(
        `  ${scenario} ${round}/${rounds}: ${leader.identity} → ${next.identity} ` +
          `in ${Math.round(next.atMs - stoppedAtMs)} ms\n`,
      );
      // A stopped elector cannot start again: the "restarted pod" is a new one, same identity.
      const [restarted] = makeCandidates(cluster, leaseName, [leader.identity], history, options);
      candidates[candidates.indexOf(leader)] = restarted!;
      restarted!.elector.start();
    }
  } finally {
    watch.stop();
    await Promise.all(candidates.map((c) => c.elector.stop()));
  }
  const failoverValues = measured.map((r) => r.failoverMs);
  return {
    scenario,
    boundMs,
    bound:
      scenario === 'crash'
        ? `leaseDuration + ${1 + ACQUIRE_JITTER} × retryPeriod`
        : `${1 + ACQUIRE_JITTER} × retryPeriod`,
    lowerBoundMs: scenario === 'crash' ? LEASE_MS - RETRY_MS : 0,
    failover: describeMs(failoverValues),
    withinBound: failoverValues.filter((ms) => ms <= boundMs).length,
    stop: describeMs(measured.map((r) => r.stopMs)),
    rounds: measured,
    singleLeaderViolations: watch.violations.length,
    singleLeaderSamples: watch.samples,
  };
}

/** The first `started` event of a candidate other than `previous` after `afterMs`. */
async function nextStart(
  history: readonly LeadershipRecord[],
  previous: string,
  afterMs: number,
  timeoutMs: number,
): Promise<LeadershipRecord> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const started = history.find(
      (r) => r.event === 'started' && r.identity !== previous && r.atMs > afterMs,
    );
    if (started) return started;
    if (performance.now() > deadline) {
      throw new Error(`no new leader within ${timeoutMs} ms after ${previous} stopped`);
    }
    await sleep(5);
  }
}

function summarize(results: readonly ScenarioResult[], rounds: number): string[] {
  const lines = [
    `failover — 3 candidates, leaseDuration ${TIMINGS.leaseDurationSeconds} s, ` +
      `renewDeadline ${TIMINGS.renewDeadlineSeconds} s, retryPeriod ${TIMINGS.retryPeriodSeconds} s, ` +
      `${rounds} rounds each`,
  ];
  for (const r of results) {
    const f = r.failover;
    lines.push(
      `  ${r.scenario.padEnd(8)} median ${pad(f.medianMs)} ms  p90 ${pad(f.p90Ms)} ms  ` +
        `max ${pad(f.maxMs)} ms  min ${pad(f.minMs)} ms | ` +
        `expected ${r.lowerBoundMs}–${r.boundMs} ms (upper: ${r.bound}), ` +
        `${r.withinBound}/${f.n} within | stop() median ${r.stop.medianMs} ms | ` +
        `two leaders: ${r.singleLeaderViolations}/${r.singleLeaderSamples} samples`,
    );
  }
  return lines;
}

function pad(ms: number): string {
  return String(ms).padStart(5);
}

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}
