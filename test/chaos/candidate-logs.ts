/**
 * The candidate harness's event logs (`test/support/candidate-process.ts`) as the chaos
 * checker's input, so one checker judges both: a `started` line opens a term
 * (`leadership-acquired`), `stopped` ends it (`leadership-lost`), each `unit-done` (of
 * `--work-units` or the unsafe candidate) is leader work (a `heartbeat`), and each `slot-begun`
 * of a `scheduled-job-app` is a run of the scheduled job (`leader-work` with its slot). Pure.
 */
import type { DemoEvent, LeaderTask } from '@nest-leader/demo/demo-events';
import type { CandidateEvent } from '../support/candidate-process.js';
import type { FaultKind } from './fault-kinds.js';
import type { ChaosInput, FaultRecord, ProcessLog } from './invariant-checker.js';

/** One candidate process's events, in the order it printed them. */
export interface CandidateLog {
  identity: string;
  events: readonly CandidateEvent[];
}

/** One fault the harness applied to a candidate process. */
export interface CandidateFault {
  kind: FaultKind;
  /** The leader's identity. */
  target: string;
  /** Wall clock when the fault was applied and when the successor's term began, ms. */
  startAt: number;
  endAt: number;
}

function demoEvent(e: CandidateEvent, task: LeaderTask): DemoEvent | undefined {
  const at = e.time;
  switch (e.event) {
    case 'started':
      return {
        event: 'leadership-acquired',
        identity: e.identity,
        leaseTransitions: e.leaseTransitions!,
        at,
      };
    case 'stopped':
      return {
        event: 'leadership-lost',
        identity: e.identity,
        leaseTransitions: e.leaseTransitions!,
        at,
      };
    case 'unit-done':
      return {
        event: 'leader-work',
        task: 'heartbeat',
        identity: e.identity,
        leaseTransitions: e.token!,
        at,
      };
    case 'slot-begun':
      return {
        event: 'leader-work',
        task,
        identity: e.identity,
        leaseTransitions: e.token!,
        at,
        slot: new Date(e.slotMs!).toISOString(),
      };
    default:
      return undefined;
  }
}

/**
 * One candidate process as the checker's process `<identity>#<slot + 1>` in row `slot`; its
 * `slot-begun` events are runs of `task`.
 */
export function candidateProcessLog(
  p: CandidateLog,
  slot: number,
  task: LeaderTask = 'dispatch-jobs',
): ProcessLog {
  return {
    instance: `${p.identity}#${slot + 1}`,
    identity: p.identity,
    slot,
    events: p.events.map((e) => demoEvent(e, task)).filter((e): e is DemoEvent => e !== undefined),
    spawnedAt: Date.parse(p.events[0]?.time ?? new Date(0).toISOString()),
  };
}

/**
 * The chaos checker's input for a run of candidate processes, with the runs of a scheduled
 * job (catch-up `'all'`) if given. Gaps are judged against `boundMs` per fault; the harness
 * probes nothing, so the probe rules judge nothing.
 */
export function candidateRunInput(options: {
  processes: readonly CandidateLog[];
  faults: readonly CandidateFault[];
  boundMs: number;
  /** The scheduled job, if any: its runs' task, one slot every `periodMs`, the horizon. */
  scheduledJob?: { task: LeaderTask; periodMs: number; horizonMs: number };
}): ChaosInput {
  const task = options.scheduledJob?.task ?? 'dispatch-jobs';
  const processes = options.processes.map((p, slot) => candidateProcessLog(p, slot, task));
  const faults: FaultRecord[] = options.faults.map((f, i) => ({
    round: i + 1,
    kind: f.kind,
    target: processes.find((p) => p.identity === f.target)?.instance,
    startAt: f.startAt,
    endAt: f.endAt,
    boundMs: options.boundMs,
    unresponsive: [],
    blind: [],
  }));
  const times = processes.flatMap((p) => p.events.map((e) => Date.parse(e.at)));
  return {
    processes,
    faults,
    probes: [],
    startupBoundMs: options.boundMs,
    liveness: { failureThreshold: 3, recoveryMs: 0, lagBoundMs: Infinity, staleLeaderMs: Infinity },
    startedAt: Math.min(...times),
    endedAt: Math.max(...times),
    ...(options.scheduledJob && { scheduledJob: options.scheduledJob }),
  };
}
