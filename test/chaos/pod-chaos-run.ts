/**
 * One `pnpm chaos --cluster` run: the demo's pods on the node cluster (apps/demo/deploy as
 * shipped), and rounds of pod-level faults drawn from a seed — wait for a settled leader pod,
 * apply the next fault to it, wait for the next term — until N faults were applied (or the time
 * limit). The verdict comes from the pods' own log lines, judged by the process tier's
 * invariant checker; the report and the picture are the process tier's.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { LeaderWorkEvent } from '@nest-leader/demo/demo-events';
import { DEMO_DEPLOY_DIR, DEMO_NAMESPACE } from '@nest-leader/demo/launcher/demo-manifests';
import { type NodeCluster, startNodeCluster } from '@nest-leader/demo/launcher/node-cluster';
import { defaultHorizonMs } from 'nest-leader/core';
import { DemoDeployment, type PodView } from '../support/demo-deployment.js';
import { eventually } from '../support/eventually.js';
import { PodLogCollector, type PodLogLine } from '../support/pod-log-collector.js';
import { buildChaosReport, type ChaosReport, type FaultCatalogue } from './chaos-report.js';
import { type ChaosRunResult, judgeRun, RUN_DATA_FILE, writeOutputs } from './chaos-run.js';
import type { ChaosTimings } from './fault-kinds.js';
import { FaultSchedule } from './fault-schedule.js';
import type { ChaosInput, FaultRecord, ProcessLog } from './invariant-checker.js';
import { applyPodFault } from './pod-fault-injector.js';
import {
  manifestTimings,
  POD_FAULT_KINDS,
  POD_FAULT_SPECS,
  POD_MEASUREMENTS,
  POD_SLACK_MS,
  type PodChaosTimings,
  type PodFaultKind,
  type PodFaultSpec,
  podHandoffBoundMs,
  podStartupBoundMs,
} from './pod-fault-kinds.js';
import { podProcessLogs } from './pod-logs.js';
import { runUnsafeIntruder, UNSAFE_IDENTITY } from './pod-positive-control.js';
import { type CandidateLog, candidateProcessLog } from './candidate-logs.js';

/** The demo Deployment's pod selector and app container (apps/demo/deploy). */
const SELECTOR = 'app.kubernetes.io/name=nest-leader-demo';
const CONTAINER = 'demo';
/**
 * How long a round may take to settle beyond a takeover, ms: a rollout replaces every pod one
 * at a time, each booting (30–50 s on a loaded node), then Ready for `minReadySeconds`; 120 s
 * was too short once at load 8–10 (seed 3320, round 39: the rollout was still replacing pods
 * 203 s after the round). Not a bound the library is judged by: a rollout that never finishes
 * still aborts the run (`round-problem`).
 */
const SETTLE_ALLOWANCE_MS = 360_000;
/** File (in the output directory) with every pod log line collected, gzipped JSON lines. */
export const POD_LOGS_FILE = 'pod-logs.jsonl.gz';

export interface PodChaosRunOptions {
  /** Stop after this many faults. */
  faults: number;
  seed: number;
  /** Fault kinds to draw from; default all. */
  kinds?: readonly PodFaultKind[];
  /** Stop after this long even if fewer faults were applied, ms. */
  maxDurationMs: number;
  /** Report, picture, the checker's input and the pods' logs go here. */
  outDir: string;
  /** The command line, for the report. */
  command: string;
  progress: (line: string) => void;
  /** Aborting it ends the run after the current round. */
  signal?: AbortSignal;
  /**
   * After the faults, the positive control's round (`unsafe-intruder`): the checker must then
   * report the unsafe candidate's overlapping term.
   */
  unsafeIntruder?: boolean;
}

/** A catalogue for the report: the pod kinds and their bounds under `t`. */
function podCatalogue(t: PodChaosTimings): FaultCatalogue {
  return {
    kinds: [...POD_FAULT_KINDS, 'unsafe-intruder'],
    describe: (kind) => POD_FAULT_SPECS[kind as PodFaultKind],
    boundMs: (kind) =>
      kind === 'startup' ? podStartupBoundMs(t) : POD_FAULT_SPECS[kind as PodFaultKind].boundMs(t),
  };
}

/**
 * Runs it end to end on a node cluster of its own (scripts/cluster.sh: hold
 * /tmp/nest-leader-cluster.lock around the caller). Never leaves the cluster behind.
 */
export async function runPodChaos(options: PodChaosRunOptions): Promise<ChaosRunResult> {
  const { progress } = options;
  const timings = manifestTimings();
  const schedule = new FaultSchedule<PodFaultKind>(
    options.seed,
    options.kinds ?? POD_FAULT_KINDS,
    {},
  );
  mkdirSync(options.outDir, { recursive: true });
  const runStarted = performance.now();
  const say = (line: string) =>
    progress(`[${((performance.now() - runStarted) / 1000).toFixed(1).padStart(6)}s] ${line}`);
  say(
    `chaos --cluster: seed ${options.seed} (replay: --seed ${options.seed}), ${options.faults} faults wanted, ` +
      `apps/demo/deploy as shipped: leaseDuration ${timings.leaseDurationMs} ms, renewDeadline ` +
      `${timings.renewDeadlineMs} ms, retryPeriod ${timings.retryPeriodMs} ms`,
  );
  const setupMs: Record<string, number> = {};
  let t = performance.now();
  const cluster: NodeCluster = await startNodeCluster({ onProgress: (line) => say(`  ${line}`) });
  setupMs.nodeCluster = Math.round(performance.now() - t);
  const demo = new DemoDeployment(cluster, DEMO_NAMESPACE, SELECTOR, CONTAINER);
  let logs: PodLogCollector | undefined;
  const faults: FaultRecord[] = [];
  let replicas = 0;
  let startedAt = Date.now();
  let aborted: string | undefined;
  let intruder: CandidateLog | undefined;
  const takeoverTimeoutMs = podStartupBoundMs(timings) + 60_000;

  const workLines = () => logs!.json<LeaderWorkEvent>().filter((e) => e.event === 'leader-work');
  /** A live leader pod working in the Lease's current term, every replica running, none terminating. */
  const settle = () =>
    eventually(
      async () => {
        const spec = await demo.leaseSpec();
        const pods = await demo.pods();
        assert.ok(
          pods.length === replicas &&
            pods.every((p) => !p.terminating && p.running && p.containerId),
          `${replicas} running pods, none terminating`,
        );
        const leader = pods.find((p) => p.name === spec.holderIdentity);
        assert.ok(leader, `the holder ${spec.holderIdentity} is a live pod`);
        const recent = workLines().some(
          (e) =>
            e.pod === leader.name &&
            e.leaseTransitions === spec.leaseTransitions &&
            Date.now() - Date.parse(e.at) < 2 * timings.workPeriodMs + POD_SLACK_MS,
        );
        assert.ok(recent, `${leader.name} works in term ${spec.leaseTransitions}`);
        // The ledger travels with the renewals: a slot the term completed is known to the next
        // leader only after a renewal carried it (the library's docs/schedule-ledger.md guarantee covers slots
        // from the first one the ledger knows). Fault a term only once one renewal after its
        // first run has had time to do so, so that slot-lost judges the guarantee itself.
        const firstRunAt = Math.min(
          ...workLines()
            .filter((e) => e.pod === leader.name && e.leaseTransitions === spec.leaseTransitions)
            .map((e) => Date.parse(e.at)),
        );
        assert.ok(
          Date.now() - firstRunAt > timings.retryPeriodMs + timings.workPeriodMs,
          `term ${spec.leaseTransitions}'s first run is carried by a renewal`,
        );
        return { leader, token: spec.leaseTransitions };
      },
      { timeoutMs: takeoverTimeoutMs + SETTLE_ALLOWANCE_MS, intervalMs: 500 },
    );
  /** The first work line of a term after `token`: the next leader at work. */
  const waitForNextTerm = (token: number) =>
    eventually(
      () => {
        const next = workLines().find((e) => e.leaseTransitions > token);
        assert.ok(next, `work in a term after ${token}`);
        return next;
      },
      { timeoutMs: takeoverTimeoutMs, intervalMs: 250 },
    );

  try {
    t = performance.now();
    await cluster.kubectl('apply', '-k', DEMO_DEPLOY_DIR);
    replicas = (await demo.deployment()).spec!.replicas!;
    logs = new PodLogCollector(demo);
    startedAt = Date.now();
    await settle();
    setupMs.firstLeader = Math.round(performance.now() - t);
    say(`${replicas} pods up, a leader at work (${setupMs.firstLeader} ms after apply)`);
    let round = 0;
    while (round < options.faults) {
      if (options.signal?.aborted) {
        say(`stopped (${String(options.signal.reason)}) after ${round} faults`);
        break;
      }
      if (performance.now() - runStarted > options.maxDurationMs) {
        say(`time limit reached after ${round} faults`);
        break;
      }
      let settled: { leader: PodView; token: number };
      try {
        settled = await settle();
      } catch (error) {
        aborted = `no settled leader after round ${round}: ${(error as Error).message}`;
        break;
      }
      round += 1;
      const kind = schedule.next();
      const { leader, token } = settled;
      const startAt = Date.now();
      const applied = await applyPodFault(kind, {
        demo,
        leader,
        token,
        pick: () => schedule.uniform(),
        watchMs: timings.leaseDurationMs,
        pastLeaseMs: timings.leaseDurationMs + 2 * timings.retryPeriodMs,
        nextTerm: waitForNextTerm,
        timings,
        replicaStartedAt: (pod, afterMs) => {
          const line = logs!
            .json<{ event: string; at: string }>()
            .find(
              (e) => e.pod === pod && e.event === 'replica-started' && Date.parse(e.at) >= afterMs,
            );
          return line && Date.parse(line.at);
        },
        logs: logs!,
      });
      const notes = [...applied.notes];
      const { measurements } = applied;
      let next: (LeaderWorkEvent & { pod: string }) | undefined;
      if (POD_FAULT_SPECS[kind].endsTerm) {
        next = await waitForNextTerm(token).catch(() => undefined);
        if (!next) notes.push(`no new term within ${takeoverTimeoutMs / 1000} s of ${kind}`);
      }
      if (kind === 'apiserver-stall') {
        notes.push(...checkStepDown(logs!, leader.name, token, measurements, timings));
      }
      const record: FaultRecord = {
        round,
        kind,
        target: `${leader.name}#${leader.restarts}`,
        startAt,
        endAt: next ? Date.parse(next.at) : Date.now(),
        boundMs: POD_FAULT_SPECS[kind].boundMs(timings, measurements),
        unresponsive: [],
        blind: [],
        measurements,
        notes,
        // A fault that must keep the leader must not stop its work either: at most a handoff.
        ...(POD_FAULT_SPECS[kind].endsTerm ? {} : { workPauseBoundMs: podHandoffBoundMs(timings) }),
      };
      faults.push(record);
      say(
        `round ${round} ${kind.padEnd(18)} on ${leader.name} (term ${token})` +
          (applied.ghost ? ` after ghost ${applied.ghost}` : '') +
          (next ? ` → ${next.pod} (term ${next.leaseTransitions})` : ' → kept') +
          (notes.length ? ` · !! ${notes.join('; ')}` : ''),
      );
    }
    // The last round's new leader may still be catching up on missed slots (one run after
    // another): stopping now would cut its lines off and judge those slots lost (seed 3322).
    if (!aborted && !options.unsafeIntruder) {
      await settle().catch((error: unknown) => {
        aborted = `no settled leader after the last round: ${(error as Error).message}`;
      });
    }
    if (options.unsafeIntruder && !aborted) {
      const { token } = await settle();
      say(`positive control: the unsafe candidate joins the Lease (term ${token} leads)`);
      const control = await runUnsafeIntruder({
        cluster,
        namespace: DEMO_NAMESPACE,
        leaseName: (await demo.deployment()).metadata!.name!,
        timings,
        podTookOver: (intruderToken) => waitForNextTerm(intruderToken),
      });
      intruder = control.log;
      faults.push({
        round: faults.length + 1,
        kind: 'unsafe-intruder',
        target: undefined, // its instance, once the pods' rows are known
        startAt: control.startAt,
        endAt: control.endAt,
        boundMs: POD_FAULT_SPECS['unsafe-intruder'].boundMs(timings),
        unresponsive: [],
        blind: [],
        notes: [],
      });
      say(
        `positive control: paused ${new Date(control.pausedAt).toISOString()}, woken ${new Date(control.resumedAt).toISOString()}, ` +
          `${control.log.events.filter((e) => e.event === 'unit-done').length} units of work`,
      );
    }
  } catch (error) {
    aborted = (error as Error).stack ?? String(error);
    say(`!! the harness failed: ${aborted}`);
  }
  const endedAt = Date.now();
  await logs?.stop();
  await cluster.stop().catch((error: unknown) => say(`cleanup: ${String(error)}`));
  const lines = logs?.lines ?? [];
  writeFileSync(
    join(options.outDir, POD_LOGS_FILE),
    gzipSync(lines.map((l) => JSON.stringify(l)).join('\n')),
  );
  const pods = podProcessLogs(lines);
  const rows = new Set(pods.map((p) => p.slot)).size;
  for (const f of faults)
    if (f.kind === 'unsafe-intruder') f.target = `${UNSAFE_IDENTITY}#${rows + 1}`;
  const input: ChaosInput = {
    processes: intruder ? [...pods, candidateProcessLog(intruder, rows)] : pods,
    faults,
    // The kubelet probes the pods; the harness does not: the probe rules judge nothing here.
    probes: [],
    startupBoundMs: podStartupBoundMs(timings),
    liveness: {
      failureThreshold: 3,
      recoveryMs: 0,
      lagBoundMs: Number.MAX_SAFE_INTEGER,
      staleLeaderMs: Number.MAX_SAFE_INTEGER,
    },
    startedAt: electionStartedAt(pods, endedAt),
    endedAt,
    scheduledJob: {
      task: 'dispatch-jobs',
      periodMs: timings.workPeriodMs,
      horizonMs: defaultHorizonMs(timings.leaseDurationMs / 1000, timings.retryPeriodMs / 1000),
    },
  };
  writeFileSync(join(options.outDir, RUN_DATA_FILE), gzipSync(JSON.stringify(input)));
  return judgePodRun(options.outDir, input, {
    seed: options.seed,
    command: options.command,
    startedAt,
    replicas,
    timings,
    setupMs,
    aborted,
  });
}

/**
 * `apiserver-stall`: the leader must step down at renewDeadline after its last renewal, which
 * was before the stall began — its `leadership-lost` line of that term within D + S of the
 * stall's start (S: a timer late on the loaded node). Records the figure; returns the notes.
 */
function checkStepDown(
  logs: PodLogCollector,
  leader: string,
  token: number,
  measurements: Record<string, number>,
  timings: PodChaosTimings,
): string[] {
  const stallStartAt = measurements[POD_MEASUREMENTS.stallStartAt];
  if (stallStartAt === undefined) return ['apiserver-stall: the stall was not applied'];
  const lost = logs
    .json<{ event: string; at: string; leaseTransitions?: number }>()
    .find((e) => e.pod === leader && e.event === 'leadership-lost' && e.leaseTransitions === token);
  if (!lost) return [`apiserver-stall: ${leader} never logged the end of term ${token}`];
  const stepDownMs = Date.parse(lost.at) - stallStartAt;
  measurements[POD_MEASUREMENTS.stepDownMs] = stepDownMs;
  const limitMs = timings.renewDeadlineMs + POD_SLACK_MS;
  return stepDownMs > limitMs
    ? [
        `apiserver-stall: ${leader} stepped down from term ${token} ${stepDownMs} ms after the API server stopped, later than renewDeadline + S (${limitMs} ms)`,
      ]
    : [];
}

/**
 * The election begins with the first pod up (its `replica-started` line), not at the apply:
 * pulling, creating and booting the pods is not leaderless time of the election.
 */
function electionStartedAt(processes: readonly ProcessLog[], endedAt: number): number {
  return Math.min(
    endedAt,
    ...processes.flatMap((p) =>
      p.events.filter((e) => e.event === 'replica-started').map((e) => Date.parse(e.at)),
    ),
  );
}

/** Judges a pod run's input (both elections) and writes its report and picture. */
async function judgePodRun(
  outDir: string,
  input: ChaosInput,
  run: {
    seed: number;
    command: string;
    /** When the run began (the apply), wall ms. */
    startedAt: number;
    replicas: number;
    timings: PodChaosTimings;
    setupMs: Record<string, number>;
    aborted?: string;
  },
): Promise<ChaosRunResult> {
  const { timings } = run;
  const chaosTimings: ChaosTimings = {
    leaseDurationMs: timings.leaseDurationMs,
    renewDeadlineMs: timings.renewDeadlineMs,
    retryPeriodMs: timings.retryPeriodMs,
    heartbeatMs: timings.workPeriodMs,
  };
  const { verdict } = judgeRun(input, chaosTimings);
  if (run.aborted) {
    verdict.violations.push({
      kind: 'round-problem',
      at: input.endedAt,
      message: `run aborted: ${run.aborted}`,
    });
  }
  const report = buildChaosReport({
    seed: run.seed,
    command: run.command,
    startedAt: run.startedAt,
    endedAt: input.endedAt,
    replicas: run.replicas,
    timings: chaosTimings,
    allowances: { slackMs: POD_SLACK_MS, apiWarmupMs: 0 },
    setupMs: run.setupMs,
    toxiproxyVersion: '',
    setting: `the demo's ${run.replicas} pods (apps/demo/deploy as shipped) on a real kubelet + containerd node`,
    faults: [...input.faults],
    verdict,
    processes: input.processes.length,
    probes: 0,
    catalogue: podCatalogue(timings),
  });
  return writeOutputs(outDir, report, verdict);
}

/**
 * Judges a finished pod run again from its saved input and, where kept, its pods' logs (after
 * a change to the checker, the bounds, the picture or how log lines become processes) and
 * rewrites its report and picture; settings from its old report.
 */
export async function recheckPodChaos(outDir: string): Promise<ChaosRunResult> {
  const saved = JSON.parse(
    gunzipSync(readFileSync(join(outDir, RUN_DATA_FILE))).toString(),
  ) as ChaosInput;
  const old = JSON.parse(readFileSync(join(outDir, 'chaos-report.json'), 'utf8')) as ChaosReport;
  const timings = manifestTimings();
  const faults = saved.faults.map((f) => {
    const spec = POD_FAULT_SPECS[f.kind as PodFaultKind] as PodFaultSpec | undefined;
    if (!spec) return f;
    return {
      ...f,
      boundMs: spec.boundMs(timings, f.measurements),
      ...(spec.endsTerm ? {} : { workPauseBoundMs: podHandoffBoundMs(timings) }),
    };
  });
  // The pods' processes are read again from their logs where they were kept (the rule that
  // makes a container run may have changed); the positive control's host process as saved.
  const podLogsFile = join(outDir, POD_LOGS_FILE);
  const processes = existsSync(podLogsFile)
    ? [
        ...podProcessLogs(
          gunzipSync(readFileSync(podLogsFile))
            .toString()
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as PodLogLine),
        ),
        ...saved.processes.filter((p) => p.identity === UNSAFE_IDENTITY),
      ]
    : saved.processes;
  const input: ChaosInput = {
    ...saved,
    processes,
    faults,
    startupBoundMs: podStartupBoundMs(timings),
    startedAt: electionStartedAt(processes, saved.endedAt),
  };
  writeFileSync(join(outDir, RUN_DATA_FILE), gzipSync(JSON.stringify(input)));
  const aborted = old.violations.find((v) => v.message.startsWith('run aborted: '));
  return judgePodRun(outDir, input, {
    seed: old.seed,
    command: old.command,
    startedAt: Date.parse(old.startedAt),
    replicas: old.replicas,
    timings,
    setupMs: old.setupMs,
    aborted: aborted?.message.slice('run aborted: '.length),
  });
}
