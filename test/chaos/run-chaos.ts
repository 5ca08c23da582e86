/**
 * `pnpm chaos [--transitions N] [--seed S] …` (processes), `pnpm chaos --cluster [--faults N]
 * …` (the demo's pods on the node cluster) or `pnpm chaos --sharded [--shards N] …` (members of
 * sharded elections, judged per shard): the chaos harness from the command line. Prints
 * progress, then the per-fault summary and every violation; exits 1 on any violation.
 */
import { mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../support/control-plane.js';
import { CHAOS_TIMINGS, recheckChaosRun, runChaos } from './chaos-run.js';
import { FAULT_KINDS, type FaultKind } from './fault-kinds.js';
import { randomSeed } from './fault-schedule.js';
import { formatSummary } from './chaos-summary.js';
import { POD_FAULT_KINDS, type PodFaultKind } from './pod-fault-kinds.js';
import { recheckPodChaos, runPodChaos } from './pod-chaos-run.js';
import { DRAWN_SHARD_FAULT_KINDS, type ShardFaultKind } from './sharded-fault-kinds.js';
import {
  formatShardedFigures,
  runShardedChaos,
  SHARDED_CHAOS_TIMINGS,
  type ShardedChaosResult,
} from './sharded-chaos-run.js';

const USAGE = `Usage: pnpm chaos [options]

Runs demo replicas on a real kube-apiserver, each through its own toxiproxy link, and applies
a seeded random schedule of faults to the leader until N leadership transitions happened;
checks the work logs for overlapping terms and the gaps against each fault's bound.

With --cluster, runs the demo's pods instead (apps/demo/deploy as shipped) on the node cluster
of scripts/cluster.sh (only one may run on a machine: wrap the command in
\`flock /tmp/nest-leader-cluster.lock …\`) and applies pod-level faults to the leader pod until N
faults were applied; the pods' own log lines are judged by the same checker.

With --sharded, runs members of sharded elections (the candidate harness's sharded program) on
a real kube-apiserver, each through its own toxiproxy link, and applies faults per member until
the wanted SIGKILL/SIGSTOP rounds and shard moves happened; every shard is judged by the same
checker as one election, and the fenced ledgers must hold no write under a stale token.

Options:
  --sharded           sharded elections, per-member faults (${DRAWN_SHARD_FAULT_KINDS.join(', ')})
  --shards N          with --sharded: shards per election (default 64)
  --lanes N           with --sharded: independent sharded elections side by side (default 1)
  --members N         with --sharded: members of each at the start, 2–5 (default 3)
  --kill-stop-rounds N
                      with --sharded: stop after N SIGKILL/SIGSTOP rounds in all (default 1000)
  --moves N           with --sharded: …and N shard moves in all (default 10000)
  --cluster           pods on the node cluster, pod-level faults (${POD_FAULT_KINDS.join(', ')})
  --faults N          with --cluster: stop after N faults (default 300)
  --unsafe-intruder   with --cluster: end with the positive control (the unsafe candidate
                      joins the pods' Lease, is paused past the lease and woken): the
                      checker must report its overlapping term
  --transitions N     stop after N transitions (default 1000)
  --seed S            schedule seed, uint32 (default: random, printed)
  --replicas N        demo replicas, 3–5 (default 5)
  --every-kind-at-least K
                      and keep going until every fault kind was applied K times (default 0)
  --max-minutes M     stop after M minutes whatever the count (default 60)
  --kinds a,b,…       only these fault kinds (default all: ${FAULT_KINDS.join(', ')})
  --out DIR           report, picture and logs (default .chaos/runs/<time>-<seed>)
  --recheck DIR       judge a finished run again from its saved data and redraw its picture
                      (a pod run: with --cluster)
  -h, --help          this help

Writes <out>/chaos-report.json and <out>/chaos-timeline.svg. Ctrl-C stops after the current
round and still writes them.
`;

function fail(message: string): never {
  process.stderr.write(`pnpm chaos: ${message}\n\n${USAGE}`);
  process.exit(2);
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      strict: true,
      options: {
        transitions: { type: 'string' },
        cluster: { type: 'boolean', default: false },
        sharded: { type: 'boolean', default: false },
        shards: { type: 'string' },
        lanes: { type: 'string' },
        members: { type: 'string' },
        'kill-stop-rounds': { type: 'string' },
        moves: { type: 'string' },
        faults: { type: 'string' },
        'unsafe-intruder': { type: 'boolean', default: false },
        seed: { type: 'string' },
        replicas: { type: 'string' },
        'max-minutes': { type: 'string' },
        'every-kind-at-least': { type: 'string' },
        kinds: { type: 'string' },
        out: { type: 'string' },
        recheck: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const whole = (
    flag: string,
    raw: string | undefined,
    fallback: number,
    min: number,
    max: number,
  ) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      fail(`${flag} must be a whole number from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  };
  if (values.recheck !== undefined) {
    if (values.sharded) fail('--recheck is not for --sharded');
    const result = values.cluster
      ? await recheckPodChaos(values.recheck)
      : await recheckChaosRun(values.recheck);
    process.stdout.write(`${formatSummary(result.report)}\n`);
    return result.report.violations.length === 0 ? 0 : 1;
  }
  const transitions = whole('--transitions', values.transitions, 1000, 1, 100_000);
  const seed = whole('--seed', values.seed, randomSeed(), 0, 2 ** 32 - 1);
  const replicas = whole('--replicas', values.replicas, 5, 3, 5);
  const everyKindAtLeast = whole(
    '--every-kind-at-least',
    values['every-kind-at-least'],
    0,
    0,
    100_000,
  );
  const maxMinutes = whole('--max-minutes', values['max-minutes'], 60, 1, 24 * 60);
  if (!values.cluster && values.faults !== undefined) fail('--faults needs --cluster');
  if (values.sharded && values.cluster) fail('--sharded and --cluster do not go together');
  for (const flag of ['shards', 'lanes', 'members', 'kill-stop-rounds', 'moves'] as const) {
    if (!values.sharded && values[flag] !== undefined) fail(`--${flag} needs --sharded`);
  }
  if (values.sharded && values.transitions !== undefined)
    fail('--transitions is not for --sharded: use --kill-stop-rounds and --moves');
  if (values.cluster && values.transitions !== undefined)
    fail('--transitions is not for --cluster: use --faults');
  const knownKinds: readonly string[] = values.cluster
    ? POD_FAULT_KINDS
    : values.sharded
      ? DRAWN_SHARD_FAULT_KINDS
      : FAULT_KINDS;
  let kinds: string[] | undefined;
  if (values.kinds !== undefined) {
    kinds = values.kinds.split(',').map((k) => k.trim());
    const unknown = kinds.filter((k) => !knownKinds.includes(k));
    if (unknown.length > 0) fail(`--kinds: unknown fault kind(s) ${unknown.join(', ')}`);
  }
  const outDir =
    values.out ??
    join(repoRoot, '.chaos', 'runs', `${new Date().toISOString().replace(/[:.]/g, '-')}-${seed}`);
  mkdirSync(outDir, { recursive: true });

  // First Ctrl-C / SIGTERM: finish the current round, stop everything, write the report.
  // Second: exit at once (the replicas, control plane and toxiproxy share our process group).
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) process.exit(130);
    process.stdout.write(`${signal}: stopping after this round (again to exit at once)\n`);
    stop.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const command = `pnpm chaos ${process.argv.slice(2).join(' ')}`.trim();
  const progress = (line: string) => process.stdout.write(`${line}\n`);
  const result = values.sharded
    ? await runShardedChaos({
        signal: stop.signal,
        seed,
        shards: whole('--shards', values.shards, 64, 1, 4096),
        lanes: whole('--lanes', values.lanes, 1, 1, 8),
        members: whole('--members', values.members, 3, 2, 5),
        killStopRounds: whole('--kill-stop-rounds', values['kill-stop-rounds'], 1000, 0, 1_000_000),
        moves: whole('--moves', values.moves, 10_000, 0, 10_000_000),
        everyKindAtLeast,
        timings: SHARDED_CHAOS_TIMINGS,
        maxDurationMs: maxMinutes * 60_000,
        kinds: kinds as ShardFaultKind[] | undefined,
        outDir,
        command,
        progress,
      })
    : values.cluster
      ? await runPodChaos({
          signal: stop.signal,
          faults: whole('--faults', values.faults, 300, 1, 100_000),
          seed,
          kinds: kinds as PodFaultKind[] | undefined,
          unsafeIntruder: values['unsafe-intruder'],
          maxDurationMs: maxMinutes * 60_000,
          outDir,
          command,
          progress,
        })
      : await runChaos({
          signal: stop.signal,
          transitions,
          everyKindAtLeast,
          seed,
          replicas,
          timings: CHAOS_TIMINGS,
          maxDurationMs: maxMinutes * 60_000,
          kinds: kinds as FaultKind[] | undefined,
          outDir,
          command,
          progress,
        });
  process.stdout.write(`\n${formatSummary(result.report)}\n`);
  if ('sharded' in result.report) {
    process.stdout.write(
      `${formatShardedFigures((result as ShardedChaosResult).report.sharded)}\n`,
    );
  }
  process.stdout.write(
    `report:  ${relative(process.cwd(), result.reportPath)}\npicture: ${relative(process.cwd(), result.svgPath)}\n`,
  );
  return result.report.violations.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`pnpm chaos: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
