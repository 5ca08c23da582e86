/**
 * The schedule ledger of one election in a Nest application: its leader-only recurring jobs
 * (found by the explorer), the ledger they record into (written with the elector's renewals),
 * and, when a term begins, the catch-up of the slots missed while no leader ran them.
 */
import { Logger } from '@nestjs/common';
import {
  type CatchUpOptions,
  type CatchUpPlan,
  planCatchUp,
} from '../../core/schedule-ledger/catch-up.policy.js';
import type { Clock } from '../../core/clock.js';
import type { LeaderTerm } from '../../core/leader-term.js';
import type { ScheduleLedgerWriter } from '../../core/leader-elector.options.js';
import {
  ScheduleLedgerBook,
  type ScheduleLedgerTerm,
} from '../../core/schedule-ledger/schedule-ledger.book.js';
import type { LedgerSlot } from '../../core/schedule-ledger/schedule-ledger.js';
import { slotOfTick } from '../../core/schedule-ledger/schedule-slots.js';
import type {
  ScheduleSlotCounter,
  ScheduleSlotOutcome,
} from '../../observability/election-metrics.interfaces.js';
import type { LeaderOnlyMethod } from '../leader-only/leader-only.interfaces.js';
import type { ScheduledSlot } from '../leader-only/leader-term.context.js';
import type { JobSchedule } from './scheduled-job.reader.js';
import { scheduleMessages } from './schedule.messages.js';

/** One leader-only recurring job of the election. */
export interface LedgerJob extends JobSchedule {
  readonly catchUp: CatchUpOptions;
  /** The job's `@LeaderOnly()` method, as its gate runs it. */
  readonly method: LeaderOnlyMethod;
  /** The instance the job's method runs on. */
  readonly instance: object;
  /** The election's `@LeaderOnly()` gate, which runs the job's late slots. */
  readonly gate: LateSlotRunner;
}

/** Runs a job's late slot as a call of its `@LeaderOnly()` method (`LeaderOnlyGate`). */
export interface LateSlotRunner {
  /**
   * Runs `method` on `instance` for `late` as the gate runs a tick: on the leader, inside the
   * term, tracked and counted, verified if the method asks for it, `late.begin()` called just
   * before the method; otherwise as a follower call (skipped, the slot left claimed, unrun).
   * Returns (or resolves to) what the method returns; throws (rejects) what it throws.
   */
  runLateSlot(method: LeaderOnlyMethod, instance: object, late: LateSlotRun): unknown;
}

/** The ledger of one term of this replica, and how far each job's slots are covered in it. */
interface TermState {
  readonly ledger: ScheduleLedgerTerm;
  /**
   * Per job, the newest slot this term has run on time or planned a catch-up up to: an on-time
   * tick beyond the next slot after it means the timer skipped slots in between.
   */
  readonly coveredUntil: Map<string, Date>;
}

/** A slot of a job about to run on the leader, begun in the ledger: settle it when its run ends. */
export interface SlotRun {
  readonly slot: ScheduledSlot;
  /** The run ended (returned, threw, or its promise settled). */
  settle(): void;
}

/** A late slot the catch-up claimed: begin it in the ledger when its run starts. */
export interface LateSlotRun extends SlotRun {
  /** The run starts: the slot is recorded as begun in this term's ledger. */
  begin(): void;
}

/**
 * Keeps the election's schedule ledger in this process. The elector writes the ledger with
 * every acquisition, renewal and release ({@link writer}); the `@LeaderOnly()` gate asks
 * {@link beginSlot} before each on-time run of a recurring job; the orchestrator calls
 * {@link termStarted} when this replica becomes leader, and the keeper runs the late slots
 * itself, each through one call of the job's gate ({@link LateSlotRunner.runLateSlot}).
 */
export class ScheduleLedgerKeeper {
  private readonly logger = new Logger('LeaderElection');
  private readonly book: ScheduleLedgerBook;
  /** Jobs by their `@LeaderOnly()` method's site object. */
  private readonly jobs = new Map<object, LedgerJob>();
  private readonly terms = new WeakMap<LeaderTerm, TermState>();
  /** The metrics' counter of each job, created on first use. */
  private readonly counters = new Map<string, ScheduleSlotCounter>();

  /**
   * @param counterFor - the metrics' counter of one job's slots (metrics on), else none
   */
  constructor(
    private readonly election: string,
    private readonly clock: Clock,
    private readonly counterFor?: (job: string) => ScheduleSlotCounter,
  ) {
    this.book = new ScheduleLedgerBook(
      (problem) => this.logger.warn(scheduleMessages.storedLedgerProblem(election, problem)),
      () => clock.wallNow().getTime(),
    );
  }

  /**
   * For `LeaderElectorOptions.scheduleLedger`: the ledger to write, or `undefined` (keep the
   * stored text) while the application has no leader-only recurring job of this election.
   */
  readonly writer: ScheduleLedgerWriter = (stored, leaseTransitions) =>
    this.jobs.size === 0 ? undefined : this.book.writer(stored, leaseTransitions);

  /** Adds a leader-only recurring job. */
  register(job: LedgerJob): void {
    this.jobs.set(job.method.site, job);
  }

  /**
   * Before an on-time run of the `@LeaderOnly()` method at `site` in `term`: `undefined` if it
   * is not a recurring job; `'duplicate'` if its tick is for a slot this term already ran or
   * claimed for a late run (do not run it again); else the slot, begun in the ledger. An
   * on-time tick that comes after a slot its timer never fired (a tick `cron` skipped because
   * the event loop was busy, a timer that drifted past a slot) has the catch-up policy applied
   * to the slots in between, as after a failover.
   */
  beginSlot(site: object, term: LeaderTerm): SlotRun | 'duplicate' | undefined {
    const job = this.jobs.get(site);
    if (job === undefined) return undefined;
    const state = this.termState(term);
    const scheduledAt = slotOfTick(
      job.slots,
      this.clock.wallNow(),
      (slot) => state.ledger.isTaken(job.job, slot),
      job.lookbackMs,
    );
    if (scheduledAt === undefined) return undefined;
    if (state.ledger.isTaken(job.job, scheduledAt)) return 'duplicate';
    this.count(job.job, 'on_time');
    const coveredUntil = state.coveredUntil.get(job.job);
    if (coveredUntil === undefined || scheduledAt > coveredUntil) {
      state.coveredUntil.set(job.job, scheduledAt);
      // Slots strictly between the last one covered and this tick's never had a tick here.
      if (coveredUntil !== undefined) {
        const gap = planCatchUp(
          job.slots,
          { lastCompleted: { scheduledAt: coveredUntil, token: term.leaseTransitions } },
          new Date(scheduledAt.getTime() - 1),
          job.catchUp,
        );
        void this.applyPlan(job, gap, undefined, term, state);
      }
    }
    const run = slotRun(job.job, scheduledAt, term, state);
    run.begin();
    return run;
  }

  /**
   * This replica became leader: plans each job's catch-up from the ledger its predecessor left
   * (read by the acquisition write) and runs the late slots, oldest first, one at a time per
   * job, each through one call of the job's gate ({@link LateSlotRunner.runLateSlot}): no
   * wrapper, no binding lookup, no second look at the ledger. Resolves when they have all ended.
   */
  async termStarted(term: LeaderTerm): Promise<void> {
    const state = this.termState(term);
    const now = this.clock.wallNow();
    const runs: Promise<void>[] = [];
    for (const job of this.jobs.values()) {
      const plan = state.ledger.plan(job.job, job.slots, now, job.catchUp);
      if (!state.coveredUntil.has(job.job)) state.coveredUntil.set(job.job, now);
      const lastCompleted = this.book.entry(job.job)?.lastCompleted;
      runs.push(this.applyPlan(job, plan, lastCompleted, term, state));
    }
    await Promise.all(runs);
  }

  /** Logs and counts a catch-up plan, claims its slots and runs them late. */
  private async applyPlan(
    job: LedgerJob,
    plan: CatchUpPlan,
    lastCompleted: LedgerSlot | undefined,
    term: LeaderTerm,
    state: TermState,
  ): Promise<void> {
    const run = plan.run.filter((slot) => !state.ledger.isTaken(job.job, slot));
    if (run.length + plan.skipped + plan.expired === 0) return;
    const line = scheduleMessages.catchingUp(
      this.election,
      job.job,
      job.catchUp.catchUp,
      { ...plan, run },
      lastCompleted,
    );
    // Under 'skip' (the default) nothing runs late: missed slots are routine after a failover.
    if (job.catchUp.catchUp === 'skip') this.logger.debug(line);
    else this.logger.log(line);
    this.count(job.job, 'skipped', plan.skipped);
    this.count(job.job, 'expired', plan.expired);
    if (run.length === 0) return;
    state.ledger.claim(job.job, run);
    for (const scheduledAt of run) {
      if (!term.isLive()) return; // the rest stay claimed, unrun: the next leader runs them
      this.count(job.job, plan.redo?.getTime() === scheduledAt.getTime() ? 'redone' : 'caught_up');
      try {
        await job.gate.runLateSlot(
          job.method,
          job.instance,
          slotRun(job.job, scheduledAt, term, state),
        );
      } catch (error) {
        this.logger.error(scheduleMessages.catchUpFailed(job.job, scheduledAt, error));
      }
    }
  }

  private termState(term: LeaderTerm): TermState {
    let state = this.terms.get(term);
    if (state === undefined) {
      state = { ledger: this.book.beginTerm(term.leaseTransitions), coveredUntil: new Map() };
      this.terms.set(term, state);
    }
    return state;
  }

  private count(job: string, outcome: ScheduleSlotOutcome, count = 1): void {
    if (count === 0 || this.counterFor === undefined) return;
    let counter = this.counters.get(job);
    if (counter === undefined) {
      counter = this.counterFor(job);
      this.counters.set(job, counter);
    }
    counter(outcome, count);
  }
}

/** `job`'s slot `scheduledAt` in `term`, begun and settled on that term's ledger. */
function slotRun(job: string, scheduledAt: Date, term: LeaderTerm, state: TermState): LateSlotRun {
  return {
    slot: { job, scheduledAt, token: term.leaseTransitions },
    begin: () => state.ledger.begin(job, scheduledAt),
    settle: () => state.ledger.settle(job, scheduledAt),
  };
}
