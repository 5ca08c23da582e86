/**
 * Failovers of a fleet of `scheduled-job-app` candidates (a Nest application with one
 * leader-only `@Cron('* * * * * *')` job, see `scheduled-job-candidate.ts`), the leader killed
 * before, during and after its runs, and what the fleet's record shows afterwards: every run
 * (slot, token, begun, completed) beside the recipe's table of effects — slots due, run on time,
 * caught up, lost, run twice and why, effects written twice, stale writes refused or accepted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CatchUpPolicy, LeaderElectionTimings } from 'nest-leader';
import {
  type CandidateEvent,
  CandidateProcess,
  describeProcesses,
  leadingProcess,
} from './candidate-process.js';
import { eventually, found } from './eventually.js';
import { monotonicNowMs } from './monotonic-time.js';

/** When, relative to the leader's run of a slot, a failover's signal is sent. */
export type FailoverMoment = 'before' | 'during' | 'after';

/** How one failover is caused: the signal, and when relative to the leader's run. */
export interface FailoverFault {
  signal: 'SIGKILL' | 'SIGTERM' | 'SIGSTOP';
  /**
   * `before`: 150 ms before a slot (the tick); `during`: half-way through a run, once the
   * leader announced its `slot-begun`; `after`: 200 ms after a run's `slot-done`.
   */
  moment: FailoverMoment;
}

/**
 * The faults in turn: the 9 combinations of signal and moment, ordered so that any 3
 * consecutive failovers use all three signals and the first 3 and the first 6 use all three
 * moments (CI's short mode runs 6), with SIGSTOP during a run — the woken leader's stale
 * write the fence must refuse — among the first 3.
 */
const ROTATION: readonly FailoverFault[] = [
  { signal: 'SIGKILL', moment: 'before' },
  { signal: 'SIGTERM', moment: 'after' },
  { signal: 'SIGSTOP', moment: 'during' },
  { signal: 'SIGKILL', moment: 'after' },
  { signal: 'SIGTERM', moment: 'during' },
  { signal: 'SIGSTOP', moment: 'before' },
  { signal: 'SIGKILL', moment: 'during' },
  { signal: 'SIGTERM', moment: 'before' },
  { signal: 'SIGSTOP', moment: 'after' },
];

/** The first `count` faults of the rotation (repeated). */
export function faultSchedule(count: number): FailoverFault[] {
  return Array.from({ length: count }, (_, i) => ROTATION[i % ROTATION.length]!);
}

export interface ScheduleFailoverOptions {
  policy: CatchUpPolicy;
  failovers: number;
  kubeconfigPath: string;
  namespace: string;
  leaseName: string;
  timings: LeaderElectionTimings;
  /** Fleet size; default 3. */
  replicas?: number;
  /** How long a run works before writing its effect, ms; default 300. */
  jobMs?: number;
  /** Progress lines (one per failover). */
  log?: (line: string) => void;
}

/** One run of a slot, as the record shows it (`runs`). */
export interface SlotRun {
  slotMs: number;
  token: number;
  writer: string;
  /** Wall clock when it began, ms. */
  startedMs: number;
  /** CLOCK_MONOTONIC when it began, when its effect was written or found written, or refused. */
  startedMonoMs: number;
  completedMonoMs: number | null;
  refusedMonoMs: number | null;
}

/**
 * Why a slot ran again, judged from the runs' own times and the end of the earlier run's term
 * (CLOCK_MONOTONIC: SIGKILL or SIGSTOP sent; SIGTERMed leader's exit, after its drain and
 * release; else its `stopped`). The README's cases: `completed-before-crash` — the earlier
 * run completed less than one retryPeriodSeconds before its term ended by a crash or pause
 * (the renewal that would carry it never came); `begun-not-completed` — it had not completed
 * when its term ended; `completed-past-an-unsettled-slot` — it completed, but an earlier slot
 * of the job (from the first one run) had no finished run when the term ended, and the
 * ledger's completion watermark only moves past slots settled in order. Anything else is
 * `unexplained`: two runs in one term, a later run begun before the earlier term ended, or a
 * redo of a run completed in order well before a crash (or before a graceful stop, whose
 * release or handoff write carries the ledger).
 */
export interface SlotRedo {
  slot: string;
  kind:
    | 'completed-before-crash'
    | 'begun-not-completed'
    | 'completed-past-an-unsettled-slot'
    | 'unexplained';
  earlier: SlotRun;
  later: SlotRun;
  /** When the earlier run's term ended (CLOCK_MONOTONIC ms), if known. */
  termEndedMonoMs: number | undefined;
}

/** One failover as the harness caused it. */
export interface FailoverRecord extends FailoverFault {
  /** The leader's identity and the token of its term when the signal was sent. */
  leader: string;
  token: number;
  /** Wall clock when the signal was sent, and when the successor's term began, ms. */
  signalledAt: number;
  successorStartedAt: number;
}

/** What the record of side effects shows after a run. */
export interface ScheduleFailoverFigures {
  policy: CatchUpPolicy;
  failovers: number;
  bySignal: Record<FailoverFault['signal'], number>;
  byMoment: Record<FailoverMoment, number>;
  /** Every slot from the first run to the last, one a second. */
  slotsDue: number;
  /** Slots whose first run began within 1 s of the scheduled time. */
  ranOnTime: number;
  /** Slots whose first run began later (a new leader's catch-up). */
  caughtUp: number;
  /** Due slots no run ever began: the README's "at least once" says none under `'all'`. */
  lost: number;
  /** Due slots with no effect written. */
  withoutEffect: number;
  /** Slots that began more than once. */
  ranTwice: number;
  /** Every later run of a slot, classified ({@link SlotRedo}). */
  redos: SlotRedo[];
  /** Slots with more than one effect: must be 0 (keyed by slot, fenced by the token). */
  effectsTwice: number;
  /** Effects the fence refused (a deposed leader's late write). */
  refusedByFence: number;
  /** Effects accepted under a token lower than one accepted before them: must be 0. */
  staleAccepted: number;
  /** Failover time, signal → new leader's `started`, ms: median and max. */
  failoverMs: { median: number; max: number };
  /** The lost slots (ISO), at most 20, for failure messages. */
  lostSlots: string[];
  /** Every process's events (all ever spawned), for the checkers. */
  processes: { identity: string; events: readonly CandidateEvent[] }[];
  faults: FailoverRecord[];
}

/**
 * Starts the fleet, causes `failovers` failovers (signals in turn: SIGKILL → a replacement
 * process; SIGTERM → graceful handover, then a replacement; SIGSTOP → SIGCONT once the
 * successor has written an effect, so the stopped run's write comes late), stops the
 * followers and then the leader (SIGTERM), and reads the record.
 * @throws Error when no new leader appears after a fault (with the processes' logs).
 */
export async function runScheduleFailovers(
  options: ScheduleFailoverOptions,
): Promise<ScheduleFailoverFigures> {
  const { policy, timings } = options;
  const jobMs = options.jobMs ?? 300;
  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-slots-'));
  const dbPath = join(dir, 'effects.db');
  const fleet: CandidateProcess[] = [];
  const everyone: CandidateProcess[] = [];
  let spawned = 0;
  const spawnOne = async (): Promise<CandidateProcess> => {
    const candidate = await CandidateProcess.startReady(
      {
        implementation: 'nest-leader',
        program: 'scheduled-job-app',
        kubeconfigPath: options.kubeconfigPath,
        leaseName: options.leaseName,
        namespace: options.namespace,
        identity: `slots-${policy}-${++spawned}`,
        timings,
        extraArgs: ['--catch-up', policy, '--db', dbPath, '--job-ms', String(jobMs)],
      },
      fleet,
    );
    everyone.push(candidate);
    return candidate;
  };
  const leaseMs = timings.leaseDurationSeconds * 1000;
  const waitMs = 2 * leaseMs + 4 * timings.retryPeriodSeconds * 1000 + 10_000;
  const failoverMs: number[] = [];
  const bySignal = { SIGKILL: 0, SIGTERM: 0, SIGSTOP: 0 };
  const byMoment = { before: 0, during: 0, after: 0 };
  const faults: FailoverRecord[] = [];
  /** Token → when its leader stopped writing the Lease (CLOCK_MONOTONIC ms), and how. */
  const termEnds = new Map<number, TermEnd>();
  const termOf = (leader: CandidateProcess) => leader.termStarted!.leaseTransitions!;
  const stopGracefully = async (leader: CandidateProcess) => {
    const token = termOf(leader);
    leader.kill('SIGTERM');
    termEnds.set(token, { atMonoMs: (await leader.exited).monotonicMs, graceful: true });
  };
  try {
    for (let i = 0; i < (options.replicas ?? 3); i++) await spawnOne();
    await leadingProcess(fleet, waitMs);
    await sleep(2000);
    for (const [index, fault] of faultSchedule(options.failovers).entries()) {
      const leader = await leadingProcess(fleet, waitMs);
      const token = termOf(leader);
      await waitForMoment(leader, fault.moment, jobMs);
      const signalledAt = Date.now();
      const killedMs = monotonicNowMs();
      if (fault.signal === 'SIGTERM') {
        void stopGracefully(leader);
      } else {
        process.kill(leader.pid!, fault.signal);
        termEnds.set(token, { atMonoMs: killedMs, graceful: false });
      }
      const successor = await waitForSuccessor(fleet, leader, killedMs, waitMs);
      const started = successor.events.find(
        (e) => e.event === 'started' && e.monotonicMs > killedMs,
      )!;
      failoverMs.push(started.monotonicMs - killedMs);
      bySignal[fault.signal]++;
      byMoment[fault.moment]++;
      faults.push({
        ...fault,
        leader: leader.identity,
        token,
        signalledAt,
        successorStartedAt: Date.parse(started.time),
      });
      if (fault.signal === 'SIGSTOP') {
        // Wake it only once the successor has written an effect: the stopped run (if any)
        // then writes under a token older than the newest the store has seen.
        await successor.waitFor(
          (e) =>
            (e.event === 'slot-done' || e.event === 'slot-refused') &&
            e.monotonicMs > started.monotonicMs,
          waitMs,
          "the successor's first effect",
        );
        process.kill(leader.pid!, 'SIGCONT');
      } else {
        await leader.exited;
        fleet.splice(fleet.indexOf(leader), 1);
        await spawnOne();
      }
      options.log?.(
        `failover ${index + 1}/${options.failovers} (${policy}): ${fault.signal} ${fault.moment} a run → ${successor.identity} in ${Math.round(started.monotonicMs - killedMs)} ms`,
      );
      // A few slots under the new leader (its catch-up included) before the next fault.
      await sleep(2500);
    }
    // End cleanly: followers first (no one takes over), then the leader drains and releases.
    const last = await leadingProcess(fleet, waitMs);
    await sleep(1500);
    await Promise.all(fleet.filter((p) => p !== last).map((p) => p.dispose()));
    await stopGracefully(last);
    // A term that ended without a fault (a renewal lost under load) ended at its `stopped`.
    for (const p of everyone) {
      for (const e of p.eventsWhere((e) => e.event === 'stopped')) {
        if (!termEnds.has(e.leaseTransitions!)) {
          termEnds.set(e.leaseTransitions!, { atMonoMs: e.monotonicMs, graceful: false });
        }
      }
    }
    return {
      ...judge(dbPath, policy, options.failovers, termEnds, timings.retryPeriodSeconds * 1000),
      bySignal,
      byMoment,
      failoverMs: summary(failoverMs),
      processes: everyone.map((p) => ({ identity: p.identity, events: [...p.events] })),
      faults,
    };
  } finally {
    await Promise.all(fleet.map((p) => p.dispose()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Waits for `moment` of `leader`'s runs: 150 ms before a slot, half-way through a run it
 * announced, or 200 ms after a run it completed.
 */
async function waitForMoment(
  leader: CandidateProcess,
  moment: FailoverMoment,
  jobMs: number,
): Promise<void> {
  if (moment === 'before') return sleepUntilSlotOffset(-150);
  const event = moment === 'during' ? 'slot-begun' : 'slot-done';
  const offsetMs = moment === 'during' ? jobMs / 2 : 200;
  let sinceMs = monotonicNowMs();
  // A line read after its moment has passed (a loaded machine delays the pipe) times the next
  // run instead: "during" must hit a run in progress.
  for (let tries = 1; ; tries++) {
    const seen = await leader.waitFor(
      (e) => e.event === event && e.monotonicMs > sinceMs,
      5000,
      `a ${event} to time the fault`,
    );
    const targetMs = seen.monotonicMs + offsetMs;
    if (targetMs >= monotonicNowMs() || tries === 5) {
      await sleep(Math.max(0, targetMs - monotonicNowMs()));
      return;
    }
    sinceMs = seen.monotonicMs;
  }
}

async function waitForSuccessor(
  fleet: CandidateProcess[],
  leader: CandidateProcess,
  killedMs: number,
  timeoutMs: number,
): Promise<CandidateProcess> {
  return eventually(
    () =>
      found(
        fleet.find(
          (p) =>
            p !== leader && p.events.some((e) => e.event === 'started' && e.monotonicMs > killedMs),
        ),
        () =>
          `no new leader within ${timeoutMs} ms of ${leader.describe()}'s fault:\n${describeProcesses(fleet)}`,
      ),
    { timeoutMs, intervalMs: 25 },
  );
}

/** Sleeps until the wall clock is `offsetMs` past a whole second (the job's slots). */
async function sleepUntilSlotOffset(offsetMs: number): Promise<void> {
  const now = Date.now();
  const phase = ((offsetMs % 1000) + 1000) % 1000;
  let target = Math.floor(now / 1000) * 1000 + phase;
  if (target <= now + 20) target += 1000;
  await sleep(target - now);
}

/** When a term's leader stopped writing the Lease, and whether by a graceful stop. */
export interface TermEnd {
  /** CLOCK_MONOTONIC ms: SIGKILL/SIGSTOP sent, the SIGTERMed process's exit, or `stopped`. */
  atMonoMs: number;
  /** SIGTERM: drained and released, the release write carrying the ledger. */
  graceful: boolean;
}

/**
 * When each slot's first run finished (completed, or had its effect refused: either way the
 * job returned and the slot is settled for the ledger), CLOCK_MONOTONIC ms; `null` if none did.
 */
export type SlotSettledAt = (slotMs: number) => number | null;

/**
 * Classifies the later run of a slot by the earlier one ({@link SlotRedo}). `firstSlotMs`: the
 * first slot run (the ledger knows nothing before it); `settledAt`: when each slot settled.
 */
export function classifyRedo(
  earlier: SlotRun,
  later: SlotRun,
  termEnds: ReadonlyMap<number, TermEnd>,
  retryPeriodMs: number,
  firstSlotMs: number,
  settledAt: SlotSettledAt,
): SlotRedo {
  const end = termEnds.get(earlier.token);
  const redo = {
    slot: new Date(earlier.slotMs).toISOString(),
    earlier,
    later,
    termEndedMonoMs: end?.atMonoMs,
  };
  // Two runs of one term, or a later run begun before the earlier one's term ended: no redo.
  if (!end || later.token <= earlier.token || later.startedMonoMs < end.atMonoMs) {
    return { ...redo, kind: 'unexplained' };
  }
  const completed = earlier.completedMonoMs;
  if (completed === null || completed > end.atMonoMs) {
    return { ...redo, kind: 'begun-not-completed' };
  }
  if (!end.graceful && end.atMonoMs - completed < retryPeriodMs) {
    return { ...redo, kind: 'completed-before-crash' };
  }
  for (let slot = firstSlotMs; slot < earlier.slotMs; slot += 1000) {
    const settled = settledAt(slot);
    if (settled === null || settled > end.atMonoMs) {
      return { ...redo, kind: 'completed-past-an-unsettled-slot' };
    }
  }
  return { ...redo, kind: 'unexplained' };
}

function judge(
  dbPath: string,
  policy: CatchUpPolicy,
  failovers: number,
  termEnds: ReadonlyMap<number, TermEnd>,
  retryPeriodMs: number,
): Omit<ScheduleFailoverFigures, 'bySignal' | 'byMoment' | 'failoverMs' | 'processes' | 'faults'> {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const runs = db
      .prepare(
        `SELECT slot_ms AS slotMs, token, writer, started_ms AS startedMs,
           started_mono_ms AS startedMonoMs, completed_mono_ms AS completedMonoMs,
           refused_mono_ms AS refusedMonoMs
         FROM runs ORDER BY started_mono_ms`,
      )
      .all() as unknown as SlotRun[];
    const effects = db
      .prepare('SELECT slot_ms AS slot, token FROM effects ORDER BY rowid')
      .all() as { slot: number; token: number }[];
    const refused = db
      .prepare("SELECT COUNT(*) AS n FROM refusals WHERE error LIKE '%stale fencing token%'")
      .get() as { n: number };
    const runsOf = new Map<number, SlotRun[]>();
    for (const run of runs) runsOf.set(run.slotMs, [...(runsOf.get(run.slotMs) ?? []), run]);
    const effectsOf = new Map<number, number>();
    let newestToken = -Infinity;
    let staleAccepted = 0;
    for (const e of effects) {
      effectsOf.set(e.slot, (effectsOf.get(e.slot) ?? 0) + 1);
      if (e.token < newestToken) staleAccepted++;
      newestToken = Math.max(newestToken, e.token);
    }
    const first = Math.min(...runsOf.keys());
    const last = Math.max(...runsOf.keys());
    const settledAt: SlotSettledAt = (slotMs) => {
      const ends = (runsOf.get(slotMs) ?? [])
        .map((r) => r.completedMonoMs ?? r.refusedMonoMs)
        .filter((at): at is number => at !== null);
      return ends.length > 0 ? Math.min(...ends) : null;
    };
    const lostSlots: string[] = [];
    let slotsDue = 0;
    let ranOnTime = 0;
    let caughtUp = 0;
    let withoutEffect = 0;
    let ranTwice = 0;
    const redos: SlotRedo[] = [];
    for (let slot = first; slot <= last; slot += 1000) {
      slotsDue++;
      if (!effectsOf.has(slot)) withoutEffect++;
      const slotRuns = runsOf.get(slot) ?? [];
      if (slotRuns.length === 0) {
        lostSlots.push(new Date(slot).toISOString());
        continue;
      }
      if (slotRuns[0]!.startedMs - slot < 1000) ranOnTime++;
      else caughtUp++;
      if (slotRuns.length > 1) ranTwice++;
      for (let i = 1; i < slotRuns.length; i++) {
        redos.push(
          classifyRedo(slotRuns[i - 1]!, slotRuns[i]!, termEnds, retryPeriodMs, first, settledAt),
        );
      }
    }
    return {
      policy,
      failovers,
      slotsDue,
      ranOnTime,
      caughtUp,
      lost: lostSlots.length,
      withoutEffect,
      ranTwice,
      redos,
      effectsTwice: [...effectsOf.values()].filter((n) => n > 1).length,
      refusedByFence: refused.n,
      staleAccepted,
      lostSlots: lostSlots.slice(0, 20),
    };
  } finally {
    db.close();
  }
}

function summary(values: number[]): { median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    max: Math.round(sorted.at(-1) ?? 0),
  };
}
