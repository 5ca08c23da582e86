/**
 * One run of the chaos harness's sharded mode (`pnpm chaos --sharded`): one or more independent
 * sharded elections ("lanes", each with its own Leases, members, links and fenced ledgers, each
 * counted on its own) on one real kube-apiserver, each through toxiproxy; every lane plays
 * seeded random rounds (sharded-fault-kinds.ts) until the run has the wanted kill/stop rounds
 * and shard moves (or its time limit). Then every shard of every lane is judged by the one
 * invariant checker, as one election each (shard-logs.ts), and the fenced ledgers are read back:
 * every accepted write's token must be at least every earlier one's.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { gzipSync } from 'node:zlib';
import type { LeaderElectionTimings } from 'nest-leader';
import { CoreV1Api } from '@kubernetes/client-node';
import { FAST_TIMINGS } from '../support/candidates.js';
import { kubeConfigFor } from '../support/cluster.js';
import { type ClusterInfo, startControlPlane } from '../support/control-plane.js';
import { monotonicNowMs } from '../support/monotonic-time.js';
import { grantLeaseAccess } from '../support/rbac.js';
import { SHARDED_VERBS } from '../support/sharded-members.js';
import { buildChaosReport, type ChaosReport, gapStats } from './chaos-report.js';
import { type BoundAllowances, type ChaosTimings, DEFAULT_ALLOWANCES } from './fault-kinds.js';
import { FaultSchedule } from './fault-schedule.js';
import {
  type ChaosVerdict,
  checkChaosRun,
  type FaultRecord,
  type ProcessLog,
  type ViolationKind,
} from './invariant-checker.js';
import { shardLogs } from './shard-logs.js';
import {
  DRAWN_SHARD_FAULT_KINDS,
  KILL_STOP_KINDS,
  SHARD_BAG_EXTRAS,
  SHARD_FAULT_KINDS,
  SHARD_FAULT_SPECS,
  type ShardFaultKind,
  shardGapBoundMs,
} from './sharded-fault-kinds.js';
import { applyShardRound } from './sharded-fault-injector.js';
import { ShardedLane, StartGate } from './sharded-fleet.js';
import { startToxiproxy } from './toxiproxy-server.js';
import { renderTimelineSvg } from './timeline-chart.js';

/**
 * The sharded mode's timings: the integration tests' (leaseDuration 4 s, renewDeadline 3 s,
 * retryPeriod 1 s). The process harness's 2/1.5/0.5 s made members on a machine at load 40–56
 * miss their renew deadline by starvation alone, over and over: the run measured the machine.
 * `heartbeatMs` is the members' units period (200 ms), the resolution of their work log.
 */
export const SHARDED_CHAOS_TIMINGS: ChaosTimings = {
  leaseDurationMs: FAST_TIMINGS.leaseDurationSeconds * 1000,
  renewDeadlineMs: FAST_TIMINGS.renewDeadlineSeconds * 1000,
  retryPeriodMs: FAST_TIMINGS.retryPeriodSeconds * 1000,
  heartbeatMs: 200,
};

/** Member processes starting at once, across all lanes. */
const MEMBER_STARTS_AT_ONCE = 3;

/** Users members authenticate as (test/control-plane's identities), granted the sharded verbs. */
const USERS = ['alice', 'bob', 'carol', 'dave'] as const;

export interface ShardedChaosOptions {
  seed: number;
  /** Shards per election. */
  shards: number;
  /** Independent sharded elections run side by side. */
  lanes: number;
  /** Members of each election at the start (2–5). */
  members: number;
  timings: ChaosTimings;
  allowances?: BoundAllowances;
  /** Stop once all lanes together played this many SIGKILL/SIGSTOP rounds… */
  killStopRounds: number;
  /** …and moved shards this often (new shard terms after the first of each shard)… */
  moves: number;
  /** …and applied every drawn kind at least this often (default 0). */
  everyKindAtLeast?: number;
  /** Stop after this long whatever the counts, ms. */
  maxDurationMs: number;
  kinds?: readonly ShardFaultKind[];
  /** Extra copies per bag of the schedule; default {@link SHARD_BAG_EXTRAS}. */
  bagExtras?: Partial<Record<ShardFaultKind, number>>;
  outDir: string;
  command: string;
  progress: (line: string) => void;
  signal?: AbortSignal;
  /** A running cluster to use (its identities); default: start a control plane of our own. */
  cluster?: ClusterInfo;
}

/** The sharded mode's own figures, beside the common report. */
export interface ShardedFigures {
  lanes: number;
  shardsPerLane: number;
  membersAtStart: number;
  rounds: number;
  killStopRounds: number;
  faultsByKind: Partial<Record<ShardFaultKind, number>>;
  /** Shard moves: shard terms after the first of each shard, by lane. */
  moves: number;
  movesByLane: number[];
  memberProcesses: number;
  violationsByRule: Partial<Record<ViolationKind, number>>;
  /** Per kind: the longest time a shard had no owner, and the bound. */
  longestUnownedGapMs: Partial<
    Record<ShardFaultKind | 'startup', { maxMs: number; boundMs: number }>
  >;
  /** Per kind: change → balanced (every shard owned once, ±1), p50/p99/max. */
  balancedMs: Partial<
    Record<ShardFaultKind, { count: number; p50: number; p99: number; max: number }>
  >;
  /** Fenced writes: refused to a woken SIGSTOPped member, and what the ledgers hold. */
  fenced: {
    refusedInSigstopRounds: number;
    refusedTotal: number;
    ledgerRows: number;
    staleAccepted: number;
  };
}

export type ShardedChaosReport = ChaosReport & { sharded: ShardedFigures };

export interface ShardedChaosResult {
  report: ShardedChaosReport;
  verdict: ChaosVerdict;
  reportPath: string;
  svgPath: string;
}

/** The per-shard judgement of one lane, plus its process-level checks (crashes, round notes). */
export function judgeLane(
  lane: ShardedLane,
  faults: readonly FaultRecord[],
  offsetMs: number,
  startedAt: number,
  endedAt: number,
  timings: ChaosTimings,
  allowances: BoundAllowances,
): ChaosVerdict {
  const members = lane.memberLogs(offsetMs);
  const perShard = shardLogs(members, lane.shards, offsetMs);
  const quiet = faults.map((f) => ({ ...f, notes: [] }));
  const base = {
    probes: [],
    startupBoundMs: shardGapBoundMs('startup', timings, allowances),
    liveness: { failureThreshold: 3, recoveryMs: 0, lagBoundMs: 0, staleLeaderMs: 0 },
    startedAt,
    endedAt,
  };
  const verdict = mergedVerdict(
    perShard.map((processes, shard) => [
      `lane ${lane.lane} shard ${shard}: `,
      checkChaosRun({ ...base, processes, faults: quiet }),
    ]),
  );
  // Crashes and the rounds' own notes, once per lane (no work lines: no terms).
  const processes: ProcessLog[] = members.map((m) => ({ ...m, events: [] }));
  verdict.violations.push(...checkChaosRun({ ...base, processes, faults }).violations);
  return verdict;
}

/** One verdict of several (shards, lanes): each violation's message after its part's prefix. */
function mergedVerdict(
  parts: readonly (readonly [prefix: string, verdict: ChaosVerdict])[],
): ChaosVerdict {
  const merged: ChaosVerdict = { terms: [], transitions: [], violations: [], lateAnnouncements: 0 };
  for (const [prefix, v] of parts) {
    merged.lateAnnouncements += v.lateAnnouncements;
    merged.terms.push(...v.terms);
    merged.transitions.push(...v.transitions);
    merged.violations.push(...v.violations.map((x) => ({ ...x, message: prefix + x.message })));
  }
  return merged;
}

/** Fenced ledgers of `dir`: rows, and rows whose token is below an earlier row's (accepted stale). */
export function readFencedLedgers(dir: string): { rows: number; staleAccepted: number } {
  let rows = 0;
  let staleAccepted = 0;
  if (!existsSync(dir)) return { rows, staleAccepted };
  for (const file of readdirSync(dir).filter((f) => /^shard-\d+\.sqlite$/.test(f))) {
    const db = new DatabaseSync(join(dir, file), { readOnly: true });
    try {
      let highest = -Infinity;
      for (const row of db.prepare('SELECT token FROM ledger ORDER BY id').iterate()) {
        const token = Number((row as { token: number }).token);
        rows += 1;
        if (token < highest) staleAccepted += 1;
        highest = Math.max(highest, token);
      }
    } finally {
      db.close();
    }
  }
  return { rows, staleAccepted };
}

/** Runs the sharded mode end to end; never leaves a process behind. */
export async function runShardedChaos(options: ShardedChaosOptions): Promise<ShardedChaosResult> {
  const { timings, progress } = options;
  const allowances = options.allowances ?? DEFAULT_ALLOWANCES;
  const kinds = options.kinds ?? DRAWN_SHARD_FAULT_KINDS;
  const runStarted = performance.now();
  const say = (line: string) =>
    progress(`[${((performance.now() - runStarted) / 1000).toFixed(1).padStart(6)}s] ${line}`);
  const electionTimings: LeaderElectionTimings = {
    leaseDurationSeconds: timings.leaseDurationMs / 1000,
    renewDeadlineSeconds: timings.renewDeadlineMs / 1000,
    retryPeriodSeconds: timings.retryPeriodMs / 1000,
  };
  say(
    `sharded chaos: seed ${options.seed} (replay: --seed ${options.seed}), ${options.lanes} election(s) of ` +
      `${options.shards} shards, ${options.members} members each, leaseDuration ${timings.leaseDurationMs} ms, ` +
      `renewDeadline ${timings.renewDeadlineMs} ms, retryPeriod ${timings.retryPeriodMs} ms`,
  );
  // Fenced ledgers take five writes a second per shard: on tmpfs where there is one.
  const dir = mkdtempSync(
    join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'nest-leader-sharded-chaos-'),
  );
  const setupMs: Record<string, number> = {};
  let stepStarted = performance.now();
  const step = (name: string) => {
    setupMs[name] = Math.round(performance.now() - stepStarted);
    stepStarted = performance.now();
  };
  const toxiproxy = await startToxiproxy((line) => say(`  ${line}`));
  step('toxiproxy');
  const ownPlane = options.cluster
    ? undefined
    : await startControlPlane({ stateDir: join(dir, 'control-plane') });
  const cluster: ClusterInfo = options.cluster ?? ownPlane!;
  step('controlPlane');
  const lanes: ShardedLane[] = [];
  const faultsByLane: FaultRecord[][] = [];
  const laneStartedAt: number[] = [];
  let refusedInSigstopRounds = 0;
  let round = 0;
  let aborted: string | undefined;
  const offsetMs = Date.now() - monotonicNowMs();
  const startedAt = Date.now();
  const startGate = new StartGate(MEMBER_STARTS_AT_ONCE);
  try {
    // Each lane in a namespace of its own: every member watches its namespace's Leases, so
    // lanes sharing one would each receive every other lane's renewals (18 members at 1 s:
    // ≈ 30 updates/s to each of 18 watchers), which starved a loaded machine.
    const laneClusters: ClusterInfo[] = [];
    const core = kubeConfigFor(cluster).makeApiClient(CoreV1Api);
    for (let i = 0; i < options.lanes; i++) {
      const namespace = `sharded-chaos-${options.seed.toString(16)}-${i}`;
      await core
        .createNamespace({ body: { metadata: { name: namespace } } })
        .catch((error: unknown) => {
          if ((error as { code?: number }).code !== 409) throw error;
        });
      const laneCluster = { ...cluster, namespace };
      for (const user of USERS) await grantLeaseAccess(laneCluster, user, SHARDED_VERBS);
      laneClusters.push(laneCluster);
    }
    step('rbac');
    for (let i = 0; i < options.lanes; i++) {
      const laneDir = join(dir, `lane-${i}`);
      mkdirSync(laneDir, { recursive: true });
      lanes.push(
        await ShardedLane.create({
          lane: i,
          cluster: laneClusters[i]!,
          toxiproxy: toxiproxy.client,
          users: USERS,
          leaseName: `chaos-sh-${options.seed.toString(16)}-${i}`,
          shards: options.shards,
          timings: electionTimings,
          dir: laneDir,
          startGate,
        }),
      );
      faultsByLane.push([]);
    }
    step('links');
    const killStops = () =>
      faultsByLane.flat().filter((f) => KILL_STOP_KINDS.includes(f.kind as ShardFaultKind)).length;
    const moves = () =>
      lanes.reduce(
        (n, lane) =>
          n +
          lane.history.reduce(
            (m, member) => m + member.process.events.filter((e) => e.event === 'started').length,
            0,
          ) -
          lane.shards,
        0,
      );
    const kindsShort = () =>
      kinds.some(
        (k) =>
          faultsByLane.flat().filter((f) => f.kind === k).length < (options.everyKindAtLeast ?? 0),
      );
    const done = (): string | undefined => {
      if (options.signal?.aborted) return `stopped (${String(options.signal.reason)})`;
      if (performance.now() - runStarted > options.maxDurationMs) return 'time limit reached';
      if (killStops() >= options.killStopRounds && moves() >= options.moves && !kindsShort()) {
        return 'wanted rounds and moves reached';
      }
      return undefined;
    };
    // A lane that fails ends alone (its failure is a violation); the others play on.
    const laneFailures: string[] = [];
    await Promise.all(
      lanes.map(async (lane, i) => {
        try {
          await playLane(lane, i);
        } catch (error) {
          laneFailures.push(`lane ${i}: ${(error as Error).stack ?? String(error)}`);
          say(`!! lane ${i} failed: ${String(error)}`);
        }
      }),
    );
    if (laneFailures.length > 0) aborted = laneFailures.join('\n');
    async function playLane(lane: ShardedLane, i: number): Promise<void> {
      const schedule = new FaultSchedule<ShardFaultKind>(
        (options.seed + i * 0x9e3779b9) >>> 0,
        kinds,
        options.bagExtras ?? SHARD_BAG_EXTRAS,
      );
      for (let tries = 0; lane.live.length < options.members; tries++) {
        if (tries >= 2 * options.members) throw new Error(`lane ${i}: members did not start`);
        await lane.spawn().catch((error: unknown) => say(`lane ${i}: ${String(error)}`));
      }
      // The election began when its first member was ready.
      const ready = lane.live[0]!.process.events.find((e) => e.event === 'ready')!;
      laneStartedAt[i] = ready.monotonicMs + offsetMs;
      await lane.balanced(monotonicNowMs(), 60_000);
      say(`lane ${i}: ${options.members} members balanced over ${options.shards} shards`);
      let misses = 0;
      for (;;) {
        const why = done();
        if (why) {
          say(`lane ${i}: ${why}`);
          return;
        }
        round += 1;
        const { records, refusals } = await applyShardRound(schedule.next(), lane, {
          timings,
          allowances,
          uniform: () => schedule.uniform(),
          offsetMs,
          round,
        });
        faultsByLane[i]!.push(...records);
        refusedInSigstopRounds += refusals;
        const notes = records.flatMap((r) => r.notes ?? []);
        say(
          `lane ${i} round ${round} ${records.map((r) => `${r.kind} ${r.target} ${r.measurements?.balancedMs ?? '?'} ms`).join(' → ')}` +
            (refusals ? ` · ${refusals} stale writes refused` : '') +
            ` · ${killStops()} kill/stop, ${moves()} moves` +
            (notes.length ? ` · !! ${notes.join('; ')}` : ''),
        );
        // A change over its bound is a violation, reported; one never balanced five rounds
        // in a row means the election is wedged: stop rather than play on.
        misses = notes.some((n) => n.includes('not balanced within')) ? misses + 1 : 0;
        if (misses >= 5) throw new Error(`lane ${i}: five rounds in a row did not settle`);
        if (lane.live.length === 0) throw new Error(`lane ${i}: no member left`);
      }
    }
  } catch (error) {
    aborted = (error as Error).stack ?? String(error);
    say(`!! the harness failed: ${aborted}`);
  }
  for (const lane of lanes) await lane.dispose();
  const endedAt = Date.now();
  await toxiproxy.stop().catch(() => undefined);
  await ownPlane?.stop().catch(() => undefined);

  // Judge every lane, shard by shard.
  const laneVerdicts = lanes.map((lane, i) =>
    judgeLane(
      lane,
      faultsByLane[i]!,
      offsetMs,
      laneStartedAt[i] ?? startedAt,
      endedAt,
      timings,
      allowances,
    ),
  );
  const verdict = mergedVerdict(laneVerdicts.map((v) => ['', v]));
  if (aborted) {
    verdict.violations.push({
      kind: 'round-problem',
      at: endedAt,
      message: `run aborted: ${aborted}`,
    });
  }
  verdict.violations.sort((a, b) => a.at - b.at);
  let refusedTotal = 0;
  for (const lane of lanes) {
    for (const m of lane.history) {
      refusedTotal += m.process.events.filter((e) => e.event === 'write-rejected').length;
    }
  }
  const ledgers = lanes.map((lane) => readFencedLedgers(lane.fencedDir));
  const faults = faultsByLane.flat().sort((a, b) => a.startAt - b.startAt);
  const report = buildChaosReport({
    seed: options.seed,
    command: options.command,
    startedAt,
    endedAt,
    replicas: options.members,
    timings,
    allowances,
    setupMs,
    toxiproxyVersion: toxiproxy.version,
    faults,
    verdict,
    processes: lanes.reduce((n, lane) => n + lane.history.length, 0),
    probes: 0,
    setting: `${options.lanes} sharded election(s) of ${options.shards} shards, ${options.members} members at the start (2–5), on a real kube-apiserver through toxiproxy; judged per shard`,
    catalogue: {
      kinds: SHARD_FAULT_KINDS,
      describe: (kind) => SHARD_FAULT_SPECS[kind as ShardFaultKind],
      boundMs: (kind) => shardGapBoundMs(kind as ShardFaultKind | 'startup', timings, allowances),
    },
  });
  const fenced = {
    refusedInSigstopRounds,
    refusedTotal,
    ledgerRows: ledgers.reduce((n, l) => n + l.rows, 0),
    staleAccepted: ledgers.reduce((n, l) => n + l.staleAccepted, 0),
  };
  if (fenced.staleAccepted > 0) {
    report.violations.push({
      kind: 'token-not-increasing',
      at: endedAt,
      message: `the fenced ledgers accepted ${fenced.staleAccepted} write(s) under a token below an earlier one`,
    });
  }
  const figures = shardedFigures(options, lanes, laneVerdicts, faults, report, fenced);
  // The full transition log is in the run data; the report keeps the 200 longest gaps.
  const shardedReport: ShardedChaosReport = {
    ...report,
    transitionLog: [...report.transitionLog].sort((a, b) => b.gapMs - a.gapMs).slice(0, 200),
    sharded: figures,
  };
  mkdirSync(options.outDir, { recursive: true });
  writeFileSync(
    join(options.outDir, 'chaos-run-data.json.gz'),
    gzipSync(JSON.stringify({ faults, laneStartedAt, offsetMs, transitions: verdict.transitions })),
  );
  const reportPath = join(options.outDir, 'chaos-report.json');
  writeFileSync(reportPath, `${JSON.stringify(shardedReport, null, 2)}\n`);
  // The picture: the first election (its members' slots as rows, its faults and gaps).
  const lane0 = laneVerdicts[0] ?? verdict;
  const picture: ChaosReport = {
    ...report,
    replicas: 100,
    faults: faultsByLane[0] ?? [],
    transitionLog: lane0.transitions,
    violations: lane0.violations,
  };
  const svgPath = join(options.outDir, 'chaos-timeline.svg');
  writeFileSync(svgPath, await renderTimelineSvg(picture, lane0.terms));
  rmSync(dir, { recursive: true, force: true });
  return { report: shardedReport, verdict, reportPath, svgPath };
}

function shardedFigures(
  options: ShardedChaosOptions,
  lanes: readonly ShardedLane[],
  laneVerdicts: readonly ChaosVerdict[],
  faults: readonly FaultRecord[],
  report: ChaosReport,
  fenced: ShardedFigures['fenced'],
): ShardedFigures {
  const faultsByKind: ShardedFigures['faultsByKind'] = {};
  const balancedMs: ShardedFigures['balancedMs'] = {};
  for (const kind of SHARD_FAULT_KINDS) {
    const ofKind = faults.filter((f) => f.kind === kind);
    if (ofKind.length === 0) continue;
    faultsByKind[kind] = ofKind.length;
    const took = ofKind
      .map((f) => f.measurements?.balancedMs)
      .filter((ms): ms is number => ms !== undefined);
    const stats = gapStats(took);
    balancedMs[kind] = { count: stats.count, p50: stats.p50, p99: stats.p99, max: stats.max };
  }
  const longestUnownedGapMs: ShardedFigures['longestUnownedGapMs'] = {};
  for (const [kind, summary] of Object.entries(report.byFault)) {
    longestUnownedGapMs[kind as ShardFaultKind] = {
      maxMs: summary!.gapMs.max,
      boundMs: summary!.boundMs,
    };
  }
  const violationsByRule: ShardedFigures['violationsByRule'] = {};
  for (const v of report.violations) violationsByRule[v.kind] = (violationsByRule[v.kind] ?? 0) + 1;
  const movesByLane = laneVerdicts.map((v) => v.transitions.filter((t) => t.from).length);
  return {
    lanes: options.lanes,
    shardsPerLane: options.shards,
    membersAtStart: options.members,
    rounds: new Set(faults.map((f) => f.round)).size,
    killStopRounds: faults.filter((f) => KILL_STOP_KINDS.includes(f.kind as ShardFaultKind)).length,
    faultsByKind,
    moves: movesByLane.reduce((a, b) => a + b, 0),
    movesByLane,
    memberProcesses: lanes.reduce((n, lane) => n + lane.history.length, 0),
    violationsByRule,
    longestUnownedGapMs,
    balancedMs,
    fenced,
  };
}

/** The sharded figures as lines, after the common summary. */
export function formatShardedFigures(f: ShardedFigures): string {
  const kinds = Object.entries(f.faultsByKind)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  const gaps = Object.entries(f.longestUnownedGapMs)
    .map(([kind, g]) => `  ${kind.padEnd(17)} longest ${g!.maxMs} ms (bound ${g!.boundMs} ms)`)
    .join('\n');
  const rules = Object.entries(f.violationsByRule)
    .map(([rule, n]) => `${rule} ${n}`)
    .join(', ');
  return [
    `sharded: ${f.lanes} election(s) × ${f.shardsPerLane} shards, ${f.memberProcesses} member processes`,
    `rounds ${f.rounds}, kill/stop rounds ${f.killStopRounds}, shard moves ${f.moves} (by election: ${f.movesByLane.join(', ')})`,
    `faults: ${kinds}`,
    `violations by rule: ${rules || 'none'}`,
    'longest time a shard had no owner, by fault kind:',
    gaps,
    `fenced writes: ${f.fenced.refusedInSigstopRounds} stale-token writes refused after SIGSTOP (${f.fenced.refusedTotal} refused in all), ` +
      `${f.fenced.ledgerRows} rows in the ledgers, ${f.fenced.staleAccepted} accepted under a stale token`,
  ].join('\n');
}
