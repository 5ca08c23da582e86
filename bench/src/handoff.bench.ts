/**
 * Targeted handoff against plain release, side by side in one run on the real kube-apiserver:
 * three fleets of 3 nest-leader candidate processes (`test/support/nest-leader-candidate.ts`,
 * followers watching the Lease), each on its own Lease, same timings (client-go's defaults,
 * 15/10/2). Each round measures every fleet once, the order rotated every round:
 *
 * - handoff: the leader is ordered (a line on its stdin) to `transferLeadership` to a random
 *   other candidate; the candidates do not advertise themselves, so the handoff is written
 *   unoffered;
 * - offered: the same, but every candidate advertises itself (`podTemplateHash`), so the leader
 *   first offers the Lease and hands it over once the target accepted (`handoff-offer.ts`);
 * - release: the leader is SIGTERMed (`stop()` with release, as on a pod's shutdown); a
 *   replacement process starts in the background, as a new pod would.
 *
 * The leaderless gap is timed from the old leader's `stopped` event (its term ended: its
 * leader-only work has stopped) to the new leader's `started` (CLOCK_MONOTONIC in every process).
 * Also recorded: order/signal → next `started`.
 */
import { uniqueLeaseName } from '@nest-leader/test/support/cluster.js';
import type { CandidateProcess } from '@nest-leader/test/support/candidate-process.js';
import type { ClusterInfo } from '@nest-leader/test/support/control-plane.js';
import { monotonicNowMs } from '@nest-leader/test/support/monotonic-time.js';
import type { LeaderElectionTimings } from 'nest-leader';
import { Fleet } from './compare/fleet.js';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { withControlPlane } from './support/control-plane.js';
import { machineInfo, writeResults } from './support/results.js';
import { sleep } from './support/sleep.js';
import { describeMs, type MsDistribution } from './support/stats.js';

const USERS = ['alice', 'bob', 'carol'] as const;
const TIMINGS: LeaderElectionTimings = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};
const RETRY_MS = TIMINGS.retryPeriodSeconds * 1000;
const TIMEOUT_MS = 2 * TIMINGS.leaseDurationSeconds * 1000 + 10_000;

type Mode = 'handoff' | 'offered' | 'release';
const MODES: readonly Mode[] = ['handoff', 'offered', 'release'];

interface Round {
  round: number;
  from: string;
  to: string;
  /** Old leader's `stopped` → new leader's `started`, ms. */
  gapMs: number;
  /** Transfer order (handoff) or SIGTERM (release) → new leader's `started`, ms. */
  commandToStartMs: number;
  /** 1-minute load average when the round ran. */
  load1: number;
}

interface Series {
  mode: Mode;
  gap: MsDistribution;
  commandToStart: MsDistribution;
  /** Terms that overlapped by the candidates' own events (must be 0). */
  overlappingTerms: number;
  rounds: Round[];
}

interface HandoffResults {
  timings: LeaderElectionTimings;
  series: Series[];
  /** handoff ÷ release, of the leaderless gap. */
  ratio: { p50: number; p99: number; max: number };
  /** 1-minute load average: min, median, max over the rounds. */
  loadAverage1m: { min: number; median: number; max: number };
}

export const handoffBench: Benchmark = {
  name: 'handoff',
  description:
    'targeted handoff (unoffered / offered) vs release (SIGTERM) on the real API server: leaderless gap p50/p99/max',
  settings: ['rounds'],
  run: (settings, command) =>
    withControlPlane(USERS, (cluster) => measure(cluster, settings, command)),
};

async function measure(cluster: ClusterInfo, settings: BenchSettings, command: string) {
  const fleets: Record<Mode, Fleet> = {
    handoff: fleetOn(cluster, 'handoff'),
    offered: fleetOn(cluster, 'offered'),
    release: fleetOn(cluster, 'release'),
  };
  const rounds: Record<Mode, Round[]> = { handoff: [], offered: [], release: [] };
  try {
    await Promise.all(Object.values(fleets).map((fleet) => fleet.start()));
    for (let round = 1; round <= settings.rounds; round++) {
      const order = MODES.map((_, i) => MODES[(i + round) % MODES.length]!);
      const line: string[] = [];
      for (const mode of order) {
        const fleet = fleets[mode];
        await settle(fleet);
        const measured = await measureOne(fleet, mode, round);
        rounds[mode].push(measured);
        line.push(`${mode} ${Math.round(measured.gapMs)} ms`);
      }
      console.log(`  round ${round}/${settings.rounds}: ${line.join(', ')}`);
    }
    await Promise.all(Object.values(fleets).map((fleet) => fleet.stop()));
  } finally {
    await Promise.all(Object.values(fleets).map((fleet) => fleet.dispose()));
  }

  const series = MODES.map((mode): Series => ({
    mode,
    gap: describeMs(rounds[mode].map((r) => r.gapMs)),
    commandToStart: describeMs(rounds[mode].map((r) => r.commandToStartMs)),
    overlappingTerms: fleets[mode].overlappingTerms(),
    rounds: rounds[mode],
  }));
  const [handoff, , release] = series as [Series, Series, Series];
  const ratio = (a: number, b: number) => Math.round((a / Math.max(b, 1)) * 100) / 100;
  const loads = MODES.flatMap((mode) => rounds[mode])
    .map((r) => r.load1)
    .sort((a, b) => a - b);
  const results: HandoffResults = {
    timings: TIMINGS,
    series,
    ratio: {
      p50: ratio(handoff.gap.medianMs, release.gap.medianMs),
      p99: ratio(handoff.gap.p99Ms, release.gap.p99Ms),
      max: ratio(handoff.gap.maxMs, release.gap.maxMs),
    },
    loadAverage1m: {
      min: loads[0]!,
      median: loads[Math.floor(loads.length / 2)]!,
      max: loads.at(-1)!,
    },
  };
  const summary = summarize(results, settings.rounds);
  const path = writeResults({
    benchmark: 'handoff',
    measures:
      'leaderless gap (old leader term end → new leader term start) of a targeted handoff ' +
      '(unoffered, and offered to advertised candidates) vs a release on SIGTERM, 3 nest-leader ' +
      'processes per Lease, followers watching, real API server',
    command,
    parameters: { rounds: settings.rounds, candidates: USERS.length, timings: TIMINGS },
    results,
    summary,
  });
  console.log(summary.join('\n'));
  console.log(`  results: ${path}`);
}

function fleetOn(cluster: ClusterInfo, mode: Mode): Fleet {
  return new Fleet(cluster, {
    implementation: 'nest-leader',
    leaseName: uniqueLeaseName(`bench-${mode}`),
    timings: TIMINGS,
    users: USERS,
    podTemplateHash: mode === 'offered' ? 'bench' : undefined,
  });
}

/** Every follower sees the leader; then a random phase of the renew cycle (0.5 s + U[0, retry)). */
async function settle(fleet: Fleet): Promise<void> {
  await fleet.ready();
  const leader = await fleet.waitForLeader(60_000);
  await fleet.waitUntilAllFollow(leader.identity, 60_000);
  await sleep(500 + Math.random() * RETRY_MS);
}

async function measureOne(fleet: Fleet, mode: Mode, round: number): Promise<Round> {
  const leader = fleet.leader()!;
  const commandMs = monotonicNowMs();
  const moved =
    mode === 'release'
      ? await fleet.handOver('SIGTERM', TIMEOUT_MS)
      : await fleet.transfer(TIMEOUT_MS);
  const next = await fleet.waitForLeader(TIMEOUT_MS, commandMs);
  const stopped = termEnd(leader.process, leader.identity, commandMs);
  return {
    round,
    from: moved.from,
    to: moved.to,
    gapMs: Math.round((next.since.monotonicMs - stopped) * 10) / 10,
    commandToStartMs: moved.ms,
    load1: machineInfo().loadAverage[0]!,
  };
}

/** CLOCK_MONOTONIC of `identity`'s `stopped` event after `afterMs`. */
function termEnd(process: CandidateProcess, identity: string, afterMs: number): number {
  const stopped = process.events.find(
    (e) => e.event === 'stopped' && e.identity === identity && e.monotonicMs > afterMs,
  );
  if (!stopped) throw new Error(`${process.describe()}: no stopped event after the command`);
  return stopped.monotonicMs;
}

function summarize(results: HandoffResults, rounds: number): string[] {
  const t = results.timings;
  const lines = [
    `handoff vs release — 3 nest-leader processes per Lease, followers watching, ` +
      `${t.leaseDurationSeconds}/${t.renewDeadlineSeconds}/${t.retryPeriodSeconds}, ${rounds} rounds each, ` +
      `load average (1 min) ${results.loadAverage1m.min}–${results.loadAverage1m.max} ` +
      `(median ${results.loadAverage1m.median}) on ${machineInfo().cpus} CPUs`,
  ];
  for (const s of results.series) {
    lines.push(
      `  ${s.mode.padEnd(8)} leaderless gap p50 ${pad(s.gap.medianMs)} ms  p99 ${pad(s.gap.p99Ms)} ms  ` +
        `max ${pad(s.gap.maxMs)} ms | command → start p50 ${s.commandToStart.medianMs} ms, ` +
        `p99 ${s.commandToStart.p99Ms} ms | overlapping terms: ${s.overlappingTerms}`,
    );
  }
  const r = results.ratio;
  lines.push(`  handoff ÷ release: p50 ${r.p50}, p99 ${r.p99}, max ${r.max}`);
  return lines;
}

function pad(ms: number): string {
  return String(ms).padStart(5);
}
