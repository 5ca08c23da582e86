/**
 * Failovers of a fleet of `scheduled-job-app` candidates (a Nest application with one
 * leader-only `@Cron('* * * * * *')` job, see `scheduled-job-candidate.ts`), the leader killed
 * around its ticks, and what the fleet's record of side effects shows afterwards: slots due,
 * run on time, caught up, lost, run twice, effects written twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CatchUpPolicy, LeaderElectionTimings } from 'nest-leader';
import { CandidateProcess, describeProcesses, leadingProcess } from './candidate-process.js';
import { eventually, found } from './eventually.js';
import { monotonicNowMs } from './monotonic-time.js';

/** How one failover is caused: the signal, and when relative to the leader's tick, ms. */
export interface FailoverFault {
  signal: 'SIGKILL' | 'SIGTERM' | 'SIGSTOP';
  /** Offset from a slot's scheduled time: < 0 before the tick, 0–`jobMs` during the run, after. */
  offsetMs: number;
}

/** The faults in turn: each signal before, during and after a run (9 combinations). */
export function faultSchedule(count: number, jobMs: number): FailoverFault[] {
  const signals = ['SIGKILL', 'SIGTERM', 'SIGSTOP'] as const;
  const offsets = [-150, Math.round(jobMs / 2), jobMs + 200];
  return Array.from({ length: count }, (_, i) => ({
    signal: signals[i % 3]!,
    offsetMs: offsets[Math.floor(i / 3) % 3]!,
  }));
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

/** What the record of side effects shows after a run. */
export interface ScheduleFailoverFigures {
  policy: CatchUpPolicy;
  failovers: number;
  bySignal: Record<FailoverFault['signal'], number>;
  /** Every slot from the first effect to the last, one a second. */
  slotsDue: number;
  /** Slots with their effect whose first run began within 1 s of the scheduled time. */
  ranOnTime: number;
  /** Slots with their effect whose first run began later (a new leader's catch-up). */
  caughtUp: number;
  /** Due slots with no effect. */
  lost: number;
  /** Slots that ran more than once (redone after a failover; the effect was then found written). */
  ranTwice: number;
  /** Slots with more than one effect: must be 0 (keyed by slot, fenced by the token). */
  effectsTwice: number;
  /** Effects the fence refused (a deposed leader's late write). */
  refusedByFence: number;
  /** Failover time, kill → new leader's `started`, ms: median and max. */
  failoverMs: { median: number; max: number };
  /** The lost slots (ISO), at most 20, for failure messages. */
  lostSlots: string[];
}

/**
 * Starts the fleet, causes `failovers` failovers (signals in turn: SIGKILL → a replacement
 * process; SIGTERM → graceful handover, then a replacement; SIGSTOP → SIGCONT once another
 * leads), stops the followers and then the leader (SIGTERM), and reads the record.
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
  let spawned = 0;
  const spawnOne = async (): Promise<CandidateProcess> => {
    return CandidateProcess.startReady(
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
  };
  const leaseMs = timings.leaseDurationSeconds * 1000;
  const waitMs = 2 * leaseMs + 4 * timings.retryPeriodSeconds * 1000 + 10_000;
  const failoverMs: number[] = [];
  const bySignal = { SIGKILL: 0, SIGTERM: 0, SIGSTOP: 0 };
  try {
    for (let i = 0; i < (options.replicas ?? 3); i++) await spawnOne();
    await leadingProcess(fleet, waitMs);
    await sleep(2000);
    for (const [index, fault] of faultSchedule(options.failovers, jobMs).entries()) {
      const leader = await leadingProcess(fleet, waitMs);
      await sleepUntilSlotOffset(fault.offsetMs);
      const killedMs = monotonicNowMs();
      process.kill(leader.pid!, fault.signal);
      const successor = await waitForSuccessor(fleet, leader, killedMs, waitMs);
      const started = successor.events.find(
        (e) => e.event === 'started' && e.monotonicMs > killedMs,
      )!;
      failoverMs.push(started.monotonicMs - killedMs);
      bySignal[fault.signal]++;
      if (fault.signal === 'SIGSTOP') {
        process.kill(leader.pid!, 'SIGCONT');
      } else {
        await leader.exited;
        fleet.splice(fleet.indexOf(leader), 1);
        await spawnOne();
      }
      options.log?.(
        `failover ${index + 1}/${options.failovers} (${policy}): ${fault.signal} at slot${fault.offsetMs >= 0 ? '+' : ''}${fault.offsetMs} ms → ${successor.identity} in ${Math.round(started.monotonicMs - killedMs)} ms`,
      );
      // A few slots under the new leader (its catch-up included) before the next fault.
      await sleep(2500);
    }
    // End cleanly: followers first (no one takes over), then the leader drains and releases.
    const last = await leadingProcess(fleet, waitMs);
    await sleep(1500);
    await Promise.all(fleet.filter((p) => p !== last).map((p) => p.dispose()));
    last.kill('SIGTERM');
    await last.exited;
    return {
      ...judge(dbPath, policy, options.failovers),
      bySignal,
      failoverMs: summary(failoverMs),
    };
  } finally {
    await Promise.all(fleet.map((p) => p.dispose()));
    rmSync(dir, { recursive: true, force: true });
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

function judge(
  dbPath: string,
  policy: CatchUpPolicy,
  failovers: number,
): Omit<ScheduleFailoverFigures, 'bySignal' | 'failoverMs'> {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const effects = db
      .prepare('SELECT slot_ms AS slot, COUNT(*) AS n FROM effects GROUP BY slot_ms')
      .all() as { slot: number; n: number }[];
    const attempts = db
      .prepare(
        'SELECT slot_ms AS slot, COUNT(*) AS n, MIN(started_ms) AS first FROM attempts GROUP BY slot_ms',
      )
      .all() as { slot: number; n: number; first: number }[];
    const refused = db
      .prepare("SELECT COUNT(*) AS n FROM refusals WHERE error LIKE '%stale fencing token%'")
      .get() as { n: number };
    const withEffect = new Set(effects.map((e) => e.slot));
    const first = Math.min(...withEffect);
    const last = Math.max(...withEffect);
    const lostSlots: string[] = [];
    let slotsDue = 0;
    for (let slot = first; slot <= last; slot += 1000) {
      slotsDue++;
      if (!withEffect.has(slot)) lostSlots.push(new Date(slot).toISOString());
    }
    // Slots with their effect, by whether their first run began on time.
    const due = attempts.filter((a) => withEffect.has(a.slot));
    const ranOnTime = due.filter((a) => a.first - a.slot < 1000).length;
    return {
      policy,
      failovers,
      slotsDue,
      ranOnTime,
      caughtUp: due.length - ranOnTime,
      lost: lostSlots.length,
      ranTwice: due.filter((a) => a.n > 1).length,
      effectsTwice: effects.filter((e) => e.n > 1).length,
      refusedByFence: refused.n,
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
