/**
 * One election's schedule ledger as a process keeps it: what the Lease last carried, what this
 * process's terms ran, and the completion watermark of each job in the current term. It gives
 * the elector the ledger text to write ({@link ScheduleLedgerBook.writer}, for
 * `LeaderElectorOptions.scheduleLedger`) and gives the scheduling side the catch-up plan of a
 * new term. Framework free; the Nest side only calls begin/settle around each run.
 */
import type { ScheduleLedgerWriter } from '../leader-elector.options.js';
import { type CatchUpOptions, type CatchUpPlan, planCatchUp } from './catch-up.policy.js';
import { CompletionWatermark } from './completion-watermark.js';
import {
  emptyScheduleLedger,
  type JobLedgerEntry,
  limitScheduleLedger,
  mergeScheduleLedgers,
  recordSlotStarted,
  type ScheduleLedger,
} from './schedule-ledger.js';
import {
  decodeScheduleLedger,
  encodeScheduleLedger,
  SCHEDULE_LEDGER_LIMITS,
} from './schedule-ledger.codec.js';
import type { SlotSchedule } from './schedule-slots.js';

/**
 * One election's schedule ledger in this process: the ledger the election record last carried
 * merged with what this process's terms ran (newer term wins). Pass {@link
 * ScheduleLedgerBook.writer} as `LeaderElectorOptions.scheduleLedger`; start a
 * {@link ScheduleLedgerTerm} per term.
 */
export class ScheduleLedgerBook {
  private stored: ScheduleLedger = emptyScheduleLedger();
  private ours: ScheduleLedger = emptyScheduleLedger();
  private lastProblemText: string | undefined;

  /**
   * @param onProblem - told (once per distinct stored text) when the stored ledger is corrupt,
   *   foreign or out of bounds and is read as empty or in part; log it as a warning.
   * @param nowMs - the wall clock, epoch ms (slots far ahead of it are dropped when read)
   */
  constructor(
    private readonly onProblem: (problem: string) => void = () => undefined,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /**
   * For `LeaderElectorOptions.scheduleLedger`: remembers the stored ledger (read within
   * `SCHEDULE_LEDGER_LIMITS`, slots of terms after `leaseTransitions` dropped) and returns it
   * merged with this process's runs, newer term wins (`mergeScheduleLedgers`), with at most
   * `SCHEDULE_LEDGER_LIMITS.maxJobs` jobs: this process's own, then the most recently run.
   */
  readonly writer: ScheduleLedgerWriter = (storedText, leaseTransitions) => {
    const decoded = decodeScheduleLedger(storedText, {
      maxToken: leaseTransitions,
      nowMs: this.nowMs(),
    });
    if (decoded.problem !== undefined && storedText !== this.lastProblemText) {
      this.lastProblemText = storedText;
      this.onProblem(decoded.problem);
    }
    const ownJobs = new Set(Object.keys(this.ours.jobs));
    const { maxJobs } = SCHEDULE_LEDGER_LIMITS;
    this.stored = limitScheduleLedger(
      mergeScheduleLedgers(this.stored, decoded.ledger),
      maxJobs,
      ownJobs,
    );
    return encodeScheduleLedger(
      limitScheduleLedger(mergeScheduleLedgers(this.stored, this.ours), maxJobs, ownJobs),
    );
  };

  /** What the ledger holds for `job` now (stored and ours merged). */
  entry(job: string): JobLedgerEntry | undefined {
    return mergeScheduleLedgers(this.stored, this.ours).jobs[job];
  }

  /**
   * A term with fencing token `token` began: its runs are recorded under that token, with
   * completion watermarks of its own. Call after the elector's acquisition write (from
   * `onStartedLeading`), so the stored ledger is the one the predecessor left.
   */
  beginTerm(token: number): ScheduleLedgerTerm {
    return new ScheduleLedgerTerm(this, token);
  }

  /** Records runs of a term into this process's side of the ledger; see {@link ScheduleLedgerTerm}. */
  record(update: ScheduleLedger): void {
    this.ours = mergeScheduleLedgers(this.ours, update);
  }
}

/**
 * How many taken slots a term remembers per job: a tick or a catch-up plan only ever asks
 * about recent slots, and a term of months would otherwise keep every slot it ran.
 */
const TAKEN_SLOTS_KEPT = 4096;

/** The schedule ledger within one term of this process (see {@link ScheduleLedgerBook.beginTerm}). */
export class ScheduleLedgerTerm {
  private readonly watermarks = new Map<string, CompletionWatermark>();
  /** Per job, the slots this term claimed for a catch-up run or began, as epoch ms. */
  private readonly takenSlots = new Map<string, Set<number>>();

  constructor(
    private readonly book: ScheduleLedgerBook,
    /** The term's fencing token (`leaseTransitions`). */
    readonly token: number,
  ) {}

  /** The catch-up plan of `job` at `now` ({@link planCatchUp} on the ledger's entry). */
  plan(job: string, schedule: SlotSchedule, now: Date, options: CatchUpOptions): CatchUpPlan {
    return planCatchUp(schedule, this.book.entry(job), now, options);
  }

  /**
   * Claims the slots of a catch-up plan before they run: the completion watermark stays below
   * them until they settle (an on-time run that ends first cannot hide them from the next
   * leader), and {@link isTaken} reports them, so an on-time tick does not run them again.
   */
  claim(job: string, slots: readonly Date[]): void {
    for (const slot of slots) {
      this.take(job, slot);
      this.watermark(job).begin(slot);
    }
  }

  /** Whether this term claimed or began `job`'s slot `scheduledAt`. */
  isTaken(job: string, scheduledAt: Date): boolean {
    return this.takenSlots.get(job)?.has(scheduledAt.getTime()) ?? false;
  }

  /** A run of `job`'s slot `scheduledAt` began in this term. */
  begin(job: string, scheduledAt: Date): void {
    this.take(job, scheduledAt);
    this.book.record(
      recordSlotStarted(emptyScheduleLedger(), job, { scheduledAt, token: this.token }),
    );
    this.watermark(job).begin(scheduledAt);
  }

  /**
   * The run of `job`'s slot `scheduledAt` ended (returned, threw or settled). Moves the
   * completion watermark when every earlier slot begun in this term has ended too.
   */
  settle(job: string, scheduledAt: Date): void {
    const moved = this.watermark(job).settle(scheduledAt);
    if (moved === undefined) return;
    this.book.record({
      jobs: { [job]: { lastCompleted: { scheduledAt: moved, token: this.token } } },
    });
  }

  /** Marks `job`'s slot taken; a long term keeps only the newest {@link TAKEN_SLOTS_KEPT}. */
  private take(job: string, slot: Date): void {
    let slots = this.takenSlots.get(job);
    if (slots === undefined) {
      slots = new Set();
      this.takenSlots.set(job, slots);
    }
    slots.add(slot.getTime());
    if (slots.size <= TAKEN_SLOTS_KEPT) return;
    // Insertion order is slot order (ticks and catch-up plans go forward): drop the oldest.
    for (const oldest of slots) {
      slots.delete(oldest);
      if (slots.size <= TAKEN_SLOTS_KEPT / 2) break;
    }
  }

  private watermark(job: string): CompletionWatermark {
    let mark = this.watermarks.get(job);
    if (mark === undefined) {
      mark = new CompletionWatermark(this.book.entry(job)?.lastCompleted?.scheduledAt);
      this.watermarks.set(job, mark);
    }
    return mark;
  }
}
