/**
 * The schedule ledger: per leader-only scheduled job, the last slot a leader started and the
 * last it completed, each with the fencing token (`leaseTransitions`) of the term that did
 * it. It is stored with the election record, so a new leader sees what its predecessor left
 * unfinished. Framework free; the codec is in `schedule-ledger.codec.ts`.
 */

/** One slot of one job as the ledger keeps it. */
export interface LedgerSlot {
  /** The slot's scheduled time (wall clock), its identity together with the job name. */
  scheduledAt: Date;
  /** Fencing token (`leaseTransitions`) of the term that started or completed the slot. */
  token: number;
}

/** What the ledger remembers of one job. */
export interface JobLedgerEntry {
  /** The newest slot a leader began to run (it may have died before completing it). */
  lastStarted?: LedgerSlot;
  /**
   * The completion watermark: this slot ran to completion (its method returned or its promise
   * settled) and every earlier slot was settled — completed, or given up by the catch-up
   * policy. A leader advances it only past slots it has settled in order, so a late catch-up
   * run finishing after a newer on-time run never hides a slot still unrun.
   */
  lastCompleted?: LedgerSlot;
}

/** The ledger of one election: an entry per job name (`Class.method` or the job's name). */
export interface ScheduleLedger {
  jobs: Record<string, JobLedgerEntry>;
}

/** An empty ledger (what a fresh election, and a corrupt stored ledger, read as). */
export function emptyScheduleLedger(): ScheduleLedger {
  return { jobs: {} };
}

/**
 * Orders two ledger slots: the one of the newer term wins; within one term the later
 * scheduled time. Negative when `a` is older than `b`.
 */
export function compareLedgerSlots(a: LedgerSlot, b: LedgerSlot): number {
  if (a.token !== b.token) return a.token - b.token;
  return a.scheduledAt.getTime() - b.scheduledAt.getTime();
}

function newer(a: LedgerSlot | undefined, b: LedgerSlot | undefined): LedgerSlot | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareLedgerSlots(a, b) >= 0 ? a : b;
}

/**
 * Merges what a leader wants to write (`ours`) into the stored ledger (`stored`), field by
 * field, newer term wins: a slot written by a newer term is never replaced by one of an
 * older term (an old leader that is paused and resumes cannot roll the ledger back), and
 * jobs only one side knows are kept. Pure: neither argument is changed.
 */
export function mergeScheduleLedgers(stored: ScheduleLedger, ours: ScheduleLedger): ScheduleLedger {
  const jobs: Record<string, JobLedgerEntry> = {};
  for (const job of new Set([...Object.keys(stored.jobs), ...Object.keys(ours.jobs)])) {
    const a = stored.jobs[job];
    const b = ours.jobs[job];
    const entry: JobLedgerEntry = {};
    const started = newer(a?.lastStarted, b?.lastStarted);
    const completed = newer(a?.lastCompleted, b?.lastCompleted);
    if (started) entry.lastStarted = { ...started };
    if (completed) entry.lastCompleted = { ...completed };
    jobs[job] = entry;
  }
  return { jobs };
}

/**
 * Records that the leader of term `token` began `scheduledAt` of `job`; returns a new ledger.
 * Never moves the entry back to an older term's or an earlier slot.
 */
export function recordSlotStarted(
  ledger: ScheduleLedger,
  job: string,
  slot: LedgerSlot,
): ScheduleLedger {
  return mergeScheduleLedgers(ledger, { jobs: { [job]: { lastStarted: slot } } });
}

/** Records that the leader of term `token` completed `scheduledAt` of `job`; a new ledger. */
export function recordSlotCompleted(
  ledger: ScheduleLedger,
  job: string,
  slot: LedgerSlot,
): ScheduleLedger {
  return mergeScheduleLedgers(ledger, {
    jobs: { [job]: { lastStarted: slot, lastCompleted: slot } },
  });
}

/** The newest slot of an entry, started or completed (undefined for an empty entry). */
function newestSlot(entry: JobLedgerEntry): LedgerSlot | undefined {
  return newer(entry.lastStarted, entry.lastCompleted);
}

/**
 * `ledger` with at most `maxJobs` jobs: every job in `keep` (this process's own) first, then
 * the others whose newest slot is newest (see {@link compareLedgerSlots}). Pure; returns
 * `ledger` itself when it is within the bound. A peer can then not make a ledger — and every
 * record written with it — grow without bound by inventing job names.
 */
export function limitScheduleLedger(
  ledger: ScheduleLedger,
  maxJobs: number,
  keep: ReadonlySet<string> = new Set(),
): ScheduleLedger {
  const names = Object.keys(ledger.jobs);
  if (names.length <= maxJobs) return ledger;
  const rank = (job: string): LedgerSlot | undefined => newestSlot(ledger.jobs[job]!);
  const others = names
    .filter((job) => !keep.has(job))
    .sort((a, b) => {
      const [x, y] = [rank(a), rank(b)];
      if (x === undefined || y === undefined) return x === undefined ? 1 : -1;
      return compareLedgerSlots(y, x);
    });
  const kept = [...names.filter((job) => keep.has(job)), ...others].slice(0, maxJobs);
  return { jobs: Object.fromEntries(kept.map((job) => [job, ledger.jobs[job]!])) };
}
