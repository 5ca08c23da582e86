/**
 * One chaos run: starts the cluster (kube-apiserver, toxiproxy, RBAC, one link per slot) and the
 * demo replicas, then plays rounds — wait for a settled leader, apply the next fault of the
 * seeded schedule to it, wait for the takeover — until the wanted number of leadership
 * transitions (or the time limit), stops everything, judges the logs and writes the JSON
 * report and the timeline picture.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { eventually } from '../support/eventually.js';
import { type ChaosCluster, startChaosCluster } from './chaos-cluster.js';
import { ChaosFleet, type FleetProcess } from './chaos-fleet.js';
import { buildChaosReport, type ChaosReport } from './chaos-report.js';
import { applyFault } from './fault-injector.js';
import {
  type BoundAllowances,
  type ChaosTimings,
  DEFAULT_ALLOWANCES,
  FAULT_KINDS,
  FAULT_SPECS,
  type FaultKind,
  gapBoundMs,
} from './fault-kinds.js';
import { FaultSchedule } from './fault-schedule.js';
import {
  type ChaosInput,
  type ChaosVerdict,
  checkChaosRun,
  collectTerms,
  type FaultRecord,
  type LivenessRules,
  type ViolationKind,
} from './invariant-checker.js';
import { shardElectionLogs, shardsInLogs } from './election-logs.js';
import { RECONCILE_INTERVAL_MS, SHARDED_ELECTION } from '@nest-leader/demo/demo.constants';
import { ProbeMonitor } from './probe-monitor.js';
import { defaultHorizonMs, SCHEDULE_LEDGER_ANNOTATION } from 'nest-leader/core';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { renderTimelineSvg } from './timeline-chart.js';

/** The harness's default timings: short, so 1,000 transitions fit in an hour. */
export const CHAOS_TIMINGS: ChaosTimings = {
  leaseDurationMs: 2000,
  renewDeadlineMs: 1500,
  retryPeriodMs: 500,
  heartbeatMs: 100,
};

/** The demo's `dispatch-jobs` cron (DISPATCH_CRON, every second second): a slot every 2 s. */
const DISPATCH_PERIOD_MS = 2000;

/** How long a round's leader must have been steady (working, two followers up) before its fault, ms. */
const SETTLED_FOR_MS = 150;
/** The demo's scheduled job (catch-up 'all') whose slots the checker judges. */
const SCHEDULED_JOB = 'dispatch-jobs';

export interface ChaosRunOptions {
  /** Stop after this many leadership transitions. */
  transitions: number;
  seed: number;
  /** Demo replicas (3–5). */
  replicas: number;
  timings: ChaosTimings;
  allowances?: BoundAllowances;
  /** Stop after this long even if fewer transitions happened, ms. */
  maxDurationMs: number;
  /** Fault kinds to draw from; default all. */
  kinds?: readonly FaultKind[];
  /** Also keep going until every kind was applied at least this often (default 0). */
  everyKindAtLeast?: number;
  /** Report, picture and replica logs go here. */
  outDir: string;
  /** The command line, for the report. */
  command: string;
  /** Progress lines. */
  progress: (line: string) => void;
  /** Aborting it ends the run after the current round; the report covers what ran. */
  signal?: AbortSignal;
}

export interface ChaosRunResult {
  report: ChaosReport;
  verdict: ChaosVerdict;
  reportPath: string;
  svgPath: string;
}

/** Runs the harness end to end. Never leaves a process behind, whatever happens. */
export async function runChaos(options: ChaosRunOptions): Promise<ChaosRunResult> {
  const { timings, progress } = options;
  const allowances = options.allowances ?? DEFAULT_ALLOWANCES;
  const schedule = new FaultSchedule(options.seed, options.kinds ?? FAULT_KINDS);
  const leaseName = `chaos-${options.seed.toString(16)}`;
  const logDir = join(options.outDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const runStarted = performance.now();
  const say = (line: string) =>
    progress(`[${((performance.now() - runStarted) / 1000).toFixed(1).padStart(6)}s] ${line}`);

  say(
    `chaos: seed ${options.seed} (replay: --seed ${options.seed}), ${options.replicas} replicas, ` +
      `${options.transitions} transitions wanted, leaseDuration ${timings.leaseDurationMs} ms, ` +
      `renewDeadline ${timings.renewDeadlineMs} ms, retryPeriod ${timings.retryPeriodMs} ms`,
  );
  const cluster: ChaosCluster = await startChaosCluster(options.replicas + 1, leaseName, (line) =>
    say(`  ${line}`),
  );
  say(
    `cluster ready: kube-apiserver ${cluster.controlPlane.url}, toxiproxy ${cluster.toxiproxy.version} ` +
      `at ${cluster.toxiproxy.url}, links ${cluster.links.map((l) => l.link.port).join(', ')}`,
  );
  const fleet = new ChaosFleet({
    replicas: options.replicas,
    kubeconfigPath: (slot) => cluster.links[slot]!.kubeconfigPath,
    logDir,
    env: {
      LEADER_LOCK: 'kubernetes',
      LEADER_LOCK_DIR: undefined,
      LEASE_NAMESPACE: cluster.namespace,
      LEASE_NAME: leaseName,
      LEASE_DURATION_SECONDS: String(timings.leaseDurationMs / 1000),
      RENEW_DEADLINE_SECONDS: String(timings.renewDeadlineMs / 1000),
      RETRY_PERIOD_SECONDS: String(timings.retryPeriodMs / 1000),
      LEADER_HEARTBEAT_MS: String(timings.heartbeatMs),
      DEMO_DEBUG_HOOKS: '1',
      SHUTDOWN_GRACE_MS: '2000',
      NEST_LOG_LEVEL: undefined,
    },
  });
  const probes = new ProbeMonitor(fleet);
  const faults: FaultRecord[] = [];
  const startedAt = Date.now();
  const startupBoundMs = gapBoundMs('startup', timings, allowances);
  const crashBoundMs = gapBoundMs('sigkill', timings, allowances);
  const takeoverTimeoutMs = 30_000;
  const restarts = new Set<Promise<unknown>>();
  let aborted: string | undefined;

  const waitForNewTerm = (termsBefore: number, timeoutMs: number) =>
    eventually(() => assert.ok(fleet.termCount() > termsBefore), {
      timeoutMs,
      intervalMs: 25,
    }).then(
      () => true,
      () => false,
    );
  const restartLater = (slot: number, termsBefore: number) => {
    // Restart once the others have taken over (or given up): a process that comes back with
    // the old leader's identity may take its own Lease back at once, which is no failover.
    const task = waitForNewTerm(termsBefore, takeoverTimeoutMs)
      .then(() => (fleet.running(slot) ? undefined : fleet.spawn(slot)))
      .catch((error: unknown) => say(`restart of slot ${slot} failed: ${String(error)}`))
      .finally(() => restarts.delete(task));
    restarts.add(task);
  };
  /** A leader whose heartbeat is current, with at least two followers running. */
  const settle = async (): Promise<{ process: FleetProcess; token: number } | undefined> => {
    let steadySince: number | undefined;
    const steadyLeader = () => {
      const leader = fleet.leader();
      // Killed replicas restart in the background; a round needs the leader and two followers.
      const followers = fleet.alive.filter(
        (p) => p !== leader?.process && p.slot < options.replicas && p.replica.port !== 0,
      );
      const ok =
        leader &&
        leader.process.slot < options.replicas &&
        Date.now() - fleet.lastWorkAt(leader.process) < 3 * timings.heartbeatMs + 200 &&
        followers.length >= 2;
      if (!ok) {
        steadySince = undefined;
        assert.fail('no leader with a current heartbeat and two followers');
      }
      steadySince ??= performance.now();
      assert.ok(performance.now() - steadySince >= SETTLED_FOR_MS, 'not steady for long enough');
      return leader;
    };
    return eventually(steadyLeader, {
      timeoutMs: crashBoundMs + takeoverTimeoutMs,
      intervalMs: 50,
    }).catch(() => undefined);
  };

  let electionStartedAt = startedAt;
  let verdict: ChaosVerdict | undefined;
  let report: ChaosReport | undefined;
  try {
    await fleet.start();
    electionStartedAt = Date.now();
    probes.start();
    say(
      `replicas up: ${fleet.alive.map((p) => `${p.instance} (pid ${p.replica.pid})`).join(', ')}`,
    );
    // The ledger travels with the renewals, and the library's catch-up guarantee
    // (docs/schedule-ledger.md) covers the slots from the first one the ledger knows: no fault
    // before the Lease's ledger holds a completed slot of the judged job, so that slot-lost
    // judges the guarantee itself (under load a leader killed in its first seconds may never
    // have had a renewal carry its first run; the next leaders then know no slot to catch up).
    const ledgerKnownAfterMs = await ledgerKnowsJob(cluster, leaseName, SCHEDULED_JOB, 60_000);
    say(
      `the Lease's schedule ledger holds a completed ${SCHEDULED_JOB} slot after ${ledgerKnownAfterMs} ms`,
    );
    let round = 0;
    let misses = 0;
    while (true) {
      const transitions = fleet.termCount() - 1;
      const kindsShort = (options.kinds ?? FAULT_KINDS).some(
        (k) => faults.filter((f) => f.kind === k).length < (options.everyKindAtLeast ?? 0),
      );
      if (transitions >= options.transitions && !kindsShort) break;
      if (options.signal?.aborted) {
        say(`stopped (${String(options.signal.reason)}) after ${transitions} transitions`);
        break;
      }
      if (performance.now() - runStarted > options.maxDurationMs) {
        say(`time limit reached after ${transitions} transitions`);
        break;
      }
      const leader = await settle();
      if (!leader) {
        misses += 1;
        const note = `no settled leader within ${Math.round((crashBoundMs + takeoverTimeoutMs) / 1000)} s after round ${round}`;
        say(`!! ${note}`);
        const last = faults.at(-1);
        if (last) (last.notes ??= []).push(note);
        if (misses >= 3) {
          aborted = 'no leader three times in a row';
          break;
        }
        continue;
      }
      misses = 0;
      round += 1;
      const kind = schedule.next();
      const termsBefore = fleet.termCount();
      const startAt = Date.now();
      const applied = await applyFault(kind, leader.process, leader.token, termsBefore, {
        cluster,
        fleet,
        timings,
        leaseName,
        waitForNewTerm,
        takeoverTimeoutMs,
      });
      const endAt = Date.now();
      const boundMs = gapBoundMs(kind, timings, allowances, {
        apiDowntimeMs: applied.measurements.apiDowntimeMs,
      });
      const record: FaultRecord = {
        round,
        kind,
        target: leader.process.instance,
        startAt,
        endAt,
        boundMs,
        unresponsive: applied.unresponsive,
        blind: applied.blind,
        measurements: applied.measurements,
        notes: [...applied.notes],
      };
      faults.push(record);
      if (FAULT_SPECS[kind].endsTerm && !(await waitForNewTerm(termsBefore, takeoverTimeoutMs))) {
        record.notes!.push(
          `no new term within ${takeoverTimeoutMs / 1000} s of ${kind} (${termsBefore} terms before, ${fleet.termCount()} now)`,
        );
      }
      for (const slot of applied.restartSlots) restartLater(slot, termsBefore);
      const terms = collectTerms(fleet.logs());
      const newTerms = terms.filter((t) => t.start >= startAt);
      const moved = newTerms.map((t) => `${t.instance} (term ${t.token})`).join(', ');
      say(
        `round ${round} ${kind.padEnd(19)} on ${leader.process.instance} (term ${leader.token})` +
          (moved ? ` → ${moved}` : ' → kept') +
          ` · ${terms.length - 1}/${options.transitions} transitions` +
          (record.notes!.length ? ` · !! ${record.notes!.join('; ')}` : ''),
      );
    }
  } catch (error) {
    aborted = (error as Error).stack ?? String(error);
    say(`!! the harness failed: ${aborted}`);
  } finally {
    probes.stop();
    for (const p of fleet.alive) p.replica.kill('SIGCONT');
    await Promise.allSettled([...restarts]);
    await fleet.stop().catch(() => fleet.kill());
    const endedAt = Date.now();
    await cluster.dispose().catch((error: unknown) => say(`cleanup: ${String(error)}`));
    const liveness: LivenessRules = {
      failureThreshold: 3,
      recoveryMs: crashBoundMs + 2000,
      lagBoundMs: timings.leaseDurationMs + allowances.slackMs,
      staleLeaderMs: timings.renewDeadlineMs + allowances.slackMs,
    };
    const input: ChaosInput = {
      processes: fleet.logs(),
      faults,
      probes: probes.samples,
      startupBoundMs,
      liveness,
      startedAt: electionStartedAt,
      endedAt,
      scheduledJob: {
        task: SCHEDULED_JOB,
        periodMs: DISPATCH_PERIOD_MS,
        horizonMs: defaultHorizonMs(timings.leaseDurationMs / 1000, timings.retryPeriodMs / 1000),
      },
    };
    // Everything the verdict was drawn from, to re-judge or re-draw a run later (--recheck).
    writeFileSync(join(options.outDir, RUN_DATA_FILE), gzipSync(JSON.stringify(input)));
    ({ verdict } = judgeRun(input, timings));
    if (aborted) {
      verdict.violations.push({
        kind: 'round-problem',
        at: endedAt,
        message: `run aborted: ${aborted}`,
      });
    }
    report = buildChaosReport({
      seed: options.seed,
      command: options.command,
      startedAt,
      endedAt,
      replicas: options.replicas,
      timings,
      allowances,
      setupMs: cluster.setupMs,
      toxiproxyVersion: cluster.toxiproxy.version,
      faults,
      verdict,
      processes: fleet.processes.length,
      probes: probes.samples.length,
    });
  }
  return writeOutputs(options.outDir, report, verdict);
}

/** Violation kinds judged on the demo's second election too (process-level ones are not). */
/**
 * What is judged per shard of the sharded election: safety only. A shard also moves without a
 * fault (a replica that restarts after one joins and takes its share), so its gaps and
 * transitions are not the faults' to bound; the cluster tier bounds its gaps.
 */
const SHARD_CHECKS: readonly ViolationKind[] = [
  'overlapping-terms',
  'work-after-term-ended',
  'token-not-increasing',
];

/**
 * Judges the default election (the one the faults target) and each shard of the demo's sharded
 * election `orders` (in the same replicas, hit by the same faults) as an election of its own,
 * the shard's token as its term: never two owners at once, no work after a shard term ended,
 * tokens increasing. Its violations join the run's, named after the election and shard.
 */
export function judgeRun(input: ChaosInput, timings: ChaosTimings): { verdict: ChaosVerdict } {
  const verdict = checkChaosRun(input);
  for (const shard of shardsInLogs(input.processes, SHARDED_ELECTION)) {
    const judged = checkChaosRun(
      {
        ...input,
        processes: shardElectionLogs(input.processes, SHARDED_ELECTION, shard),
        probes: [],
      },
      { attribution: 'overlapping-rounds', extraMs: RECONCILE_INTERVAL_MS - timings.heartbeatMs },
    );
    verdict.lateAnnouncements += judged.lateAnnouncements;
    for (const v of judged.violations) {
      if (SHARD_CHECKS.includes(v.kind)) {
        verdict.violations.push({
          ...v,
          message: `election ${SHARDED_ELECTION} shard ${shard}: ${v.message}`,
        });
      }
    }
  }
  verdict.violations.sort((a, b) => a.at - b.at);
  return { verdict };
}

/** File (in the output directory) holding the checker's input, gzipped JSON. */
export const RUN_DATA_FILE = 'chaos-run-data.json.gz';

/** Writes the report (chaos-report.json) and its picture (chaos-timeline.svg) into `outDir`. */
export async function writeOutputs(
  outDir: string,
  report: ChaosReport,
  verdict: ChaosVerdict,
): Promise<ChaosRunResult> {
  const reportPath = join(outDir, 'chaos-report.json');
  writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`);
  const svgPath = join(outDir, 'chaos-timeline.svg');
  writeFileSync(svgPath, await renderTimelineSvg(report, verdict.terms));
  return { report, verdict, reportPath, svgPath };
}

/**
 * Judges a finished run again from its saved data (after a change to the checker or the
 * picture) and rewrites its report and picture; the run's settings come from its old report.
 */
export async function recheckChaosRun(outDir: string): Promise<ChaosRunResult> {
  const input = JSON.parse(
    gunzipSync(readFileSync(join(outDir, RUN_DATA_FILE))).toString(),
  ) as ChaosInput;
  const old = JSON.parse(readFileSync(join(outDir, 'chaos-report.json'), 'utf8')) as ChaosReport;
  const { verdict } = judgeRun(input, old.timings);
  const report = buildChaosReport({
    seed: old.seed,
    command: old.command,
    startedAt: Date.parse(old.startedAt),
    endedAt: Date.parse(old.endedAt),
    replicas: old.replicas,
    timings: old.timings,
    allowances: old.allowances,
    setupMs: old.setupMs,
    toxiproxyVersion: old.toxiproxyVersion,
    faults: [...input.faults],
    verdict,
    processes: input.processes.length,
    probes: input.probes.length,
  });
  return writeOutputs(outDir, report, verdict);
}

/**
 * Waits until the Lease's schedule ledger (annotation `SCHEDULE_LEDGER_ANNOTATION`) holds a
 * completed slot of `job`; returns how long that took (ms). Throws after `timeoutMs`.
 */
async function ledgerKnowsJob(
  cluster: ChaosCluster,
  leaseName: string,
  job: string,
  timeoutMs: number,
): Promise<number> {
  const api = cluster.admin.makeApiClient(CoordinationV1Api);
  const started = performance.now();
  await eventually(
    async () => {
      const lease = await api.readNamespacedLease({
        name: leaseName,
        namespace: cluster.namespace,
      });
      const text = lease.metadata?.annotations?.[SCHEDULE_LEDGER_ANNOTATION];
      assert.ok(text !== undefined, 'the Lease has no schedule ledger yet');
      const stored = JSON.parse(text) as { jobs?: Record<string, { c?: unknown }> };
      assert.ok(stored.jobs?.[job]?.c !== undefined, `the ledger has no completed ${job} slot`);
    },
    { timeoutMs, intervalMs: 100 },
  );
  return Math.round(performance.now() - started);
}
