/**
 * File-lock handover with real processes at the library's default timings (leaseDuration 15 s,
 * renewDeadline 10 s, retryPeriod 2 s), the laptop loop of issue 25: candidates are
 * `test/support/nest-leader-candidate.ts --lock file` processes (started with `CandidateProcess`)
 * on one lease file in a temporary directory.
 *
 * - release: leader + follower; SIGTERM to the leader (it stops and releases); from the
 *   leader's exit (as its parent sees it) to the follower's `onStartedLeading`. The follower
 *   learns of the release from its `fs.watch` of the lock's directory.
 * - crash: leader + follower; SIGKILL to the leader; from the kill to the follower's
 *   `onStartedLeading`. The follower's watch re-checks the holder's process (`/proc`) every
 *   250 ms and takes the lock once the OS proves it gone.
 * - restart: the leader alone; SIGKILL, wait for its exit, start a new process (a restarted dev
 *   server); from the kill, and from the new process's spawn, to its `onStartedLeading`
 *   (includes Node's start-up).
 *
 * The Lease's graceful-handover figures at the same timings are read from
 * `bench/results/compare.json` and printed beside these.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CandidateProcess } from '@nest-leader/test/support/candidate-process.js';
import { monotonicNowMs } from '@nest-leader/test/support/monotonic-time.js';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { RESULTS_DIR, writeResults } from './support/results.js';
import { sleep } from './support/sleep.js';
import { describeMs, type MsDistribution } from './support/stats.js';

const TIMINGS = { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 };
const TIMEOUT_MS = 30_000;

type Scenario = 'release' | 'crash' | 'restart';

interface HandoverRound {
  round: number;
  /** release: leader exit → follower started; crash/restart: SIGKILL → new leader started. */
  handoverMs: number;
  /** release: SIGTERM sent → follower started. restart: new process spawned → started. */
  otherMs?: number;
  leaseTransitions: number;
}

interface ScenarioResult {
  scenario: Scenario;
  measures: string;
  handover: MsDistribution;
  other?: { measures: string; distribution: MsDistribution };
  rounds: HandoverRound[];
}

export const fileHandoverBench: Benchmark = {
  name: 'file-handover',
  description: 'file-lock handover with real processes at 15/10/2: SIGTERM, SIGKILL, restart',
  settings: ['rounds'],
  async run(settings: BenchSettings, command: string): Promise<void> {
    const started = performance.now();
    const results: ScenarioResult[] = [];
    for (const scenario of ['release', 'crash', 'restart'] as const) {
      results.push(await measure(scenario, settings.rounds));
    }
    const lease = leaseFigures();
    const summary = summarize(results, settings.rounds, lease, performance.now() - started);
    const path = writeResults({
      benchmark: 'file-handover',
      measures: 'file-lock handover with real processes at 15/10/2 (SIGTERM, SIGKILL, restart)',
      command,
      parameters: { rounds: settings.rounds, timings: [15, 10, 2] },
      results: { scenarios: results, leaseFromCompare: lease },
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`results: ${path}`);
  },
};

async function measure(scenario: Scenario, rounds: number): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-bench-file-'));
  const path = join(dir, 'jobs.lease.json');
  const all: CandidateProcess[] = [];
  const start = async (identity: string): Promise<CandidateProcess> => {
    const candidate = await CandidateProcess.start({
      implementation: 'nest-leader',
      lock: 'file',
      lockFile: path,
      identity,
      timings: TIMINGS,
    });
    all.push(candidate);
    return candidate;
  };
  const measured: HandoverRound[] = [];
  try {
    let leader = await start(`${scenario}-0`);
    await leader.waitFor((e) => e.event === 'started', TIMEOUT_MS);
    for (let round = 1; round <= rounds; round++) {
      if (scenario === 'restart') {
        await sleep(2_000 + Math.random() * 1_000); // a random phase of the renew cycle
        const killedMs = leader.kill('SIGKILL');
        await leader.exited;
        const spawnedMs = monotonicNowMs();
        const next = await start(`${scenario}-${round}`);
        const took = await next.waitFor((e) => e.event === 'started', TIMEOUT_MS);
        measured.push({
          round,
          handoverMs: took.monotonicMs - killedMs,
          otherMs: took.monotonicMs - spawnedMs,
          leaseTransitions: took.leaseTransitions!,
        });
        leader = next;
        continue;
      }
      const follower = await start(`${scenario}-${round}`);
      // The follower has read the lock (it names the leader) and watches it.
      await follower.waitFor((e) => e.message?.includes(leader.identity) ?? false, TIMEOUT_MS);
      await sleep(2_000 + Math.random() * 1_000);
      const signal = scenario === 'release' ? 'SIGTERM' : 'SIGKILL';
      const signalledMs = leader.kill(signal);
      await leader.exited;
      const exitedMs = monotonicNowMs();
      const took = await follower.waitFor((e) => e.event === 'started', TIMEOUT_MS);
      measured.push(
        scenario === 'release'
          ? {
              round,
              handoverMs: took.monotonicMs - exitedMs,
              otherMs: took.monotonicMs - signalledMs,
              leaseTransitions: took.leaseTransitions!,
            }
          : {
              round,
              handoverMs: took.monotonicMs - signalledMs,
              leaseTransitions: took.leaseTransitions!,
            },
      );
      leader = follower;
    }
  } finally {
    await Promise.all(all.map((candidate) => candidate.dispose()));
    rmSync(dir, { recursive: true, force: true });
  }
  const handovers = measured.map((r) => r.handoverMs);
  const others = measured.flatMap((r) => (r.otherMs === undefined ? [] : [r.otherMs]));
  return {
    scenario,
    measures: {
      release: "the old leader's exit → the follower's onStartedLeading",
      crash: 'SIGKILL of the leader → the follower’s onStartedLeading',
      restart: 'SIGKILL of the leader → the restarted process’s onStartedLeading',
    }[scenario],
    handover: describeMs(handovers),
    other:
      others.length === 0
        ? undefined
        : {
            measures:
              scenario === 'release'
                ? 'SIGTERM sent → the follower’s onStartedLeading (drain + release + exit included)'
                : 'the new process spawned → its onStartedLeading (Node start-up included)',
            distribution: describeMs(others),
          },
    rounds: measured,
  };
}

/** The Lease's graceful handover at 15/10/2 from `compare.json`, as its summary line says it. */
function leaseFigures(): string | undefined {
  try {
    const compare = JSON.parse(readFileSync(`${RESULTS_DIR}compare.json`, 'utf8')) as {
      date: string;
      summary: string[];
    };
    const line = compare.summary.find((l) => /^\| 15\/10\/2 \| nest-leader \|/.test(l));
    if (!line) return undefined;
    const [, , , n, p50, p90, p99, max] = line.split('|').map((cell) => cell.trim());
    return `n ${n}, p50 ${p50} ms, p90 ${p90} ms, p99 ${p99} ms, max ${max} ms (compare.json, ${compare.date.slice(0, 10)})`;
  } catch {
    return undefined;
  }
}

function summarize(
  results: readonly ScenarioResult[],
  rounds: number,
  lease: string | undefined,
  elapsedMs: number,
): string[] {
  const row = (d: MsDistribution): string =>
    `p50 ${d.medianMs} ms, p90 ${d.p90Ms} ms, max ${d.maxMs} ms, min ${d.minMs} ms`;
  const lines = [
    `file-handover — FileLock, real processes, leaseDuration 15 s / renewDeadline 10 s / ` +
      `retryPeriod 2 s, ${rounds} rounds each, ${Math.round(elapsedMs / 1000)} s`,
  ];
  for (const r of results) {
    lines.push(`  ${r.scenario.padEnd(8)} ${r.measures}: ${row(r.handover)}`);
    if (r.other) lines.push(`  ${''.padEnd(8)} ${r.other.measures}: ${row(r.other.distribution)}`);
  }
  lines.push(
    `  Lease (watching), graceful handover SIGTERM → next started at 15/10/2: ${lease ?? 'no compare.json result'}`,
  );
  return lines;
}
