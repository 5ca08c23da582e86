/**
 * The stored form of the {@link ScheduleLedger}: versioned JSON, e.g. in the annotation
 * `nest-leader/schedule-ledger` of the election's Lease or a field of a lease file.
 * Reading never throws: corrupt or foreign content reads as an empty ledger with a reason to
 * warn about (a ledger is a convenience for catch-up, never a reason to stop an app).
 */
import {
  emptyScheduleLedger,
  type JobLedgerEntry,
  type LedgerSlot,
  type ScheduleLedger,
} from './schedule-ledger.js';
import { scheduleLedgerMessages } from './schedule-ledger.messages.js';

/** The format version this code writes (`v` in the JSON). */
export const SCHEDULE_LEDGER_FORMAT_VERSION = 1;

/**
 * Bounds of a stored ledger as read: any candidate that may write the Lease (or the lease file)
 * writes it, so reading never trusts its size, its job names, its tokens or its times.
 */
export const SCHEDULE_LEDGER_LIMITS = {
  /** A longer stored text is not read (empty, with a problem), in characters. */
  maxTextLength: 128 * 1024,
  /** Jobs read (and written: {@link ScheduleLedgerBook} keeps its own jobs and the newest). */
  maxJobs: 512,
  /** A longer job name is dropped, in characters (names are `Class.method` or a job's name). */
  maxJobNameLength: 256,
  /**
   * A slot scheduled later than this after the reader's clock is dropped, in ms (one day: far
   * more than any clock skew between pods, far less than a forged date years ahead, which
   * would hide every real slot from the catch-up plan).
   */
  maxAheadMs: 24 * 60 * 60 * 1000,
} as const;

/** What a reader knows to judge a stored ledger by (see {@link decodeScheduleLedger}). */
export interface ScheduleLedgerReadBounds {
  /**
   * The newest fencing token a slot may carry: the `leaseTransitions` of the record the ledger
   * is stored with. A slot of a later term cannot have run, and would win every merge forever.
   */
  maxToken?: number;
  /** The reader's wall clock, epoch ms; default `Date.now()`. */
  nowMs?: number;
}

/** Stored slot: `[scheduledAt as ISO 8601, token]`. */
type StoredSlot = [string, number];

interface StoredLedger {
  v: number;
  jobs: Record<string, { s?: StoredSlot; c?: StoredSlot }>;
}

/** The outcome of reading a stored ledger: the ledger, and a reason when it was unreadable. */
export interface DecodedScheduleLedger {
  ledger: ScheduleLedger;
  /** Why the stored text was read as empty (or an entry dropped); undefined when clean. */
  problem?: string;
}

/** The JSON text of `ledger`, in format {@link SCHEDULE_LEDGER_FORMAT_VERSION}. */
export function encodeScheduleLedger(ledger: ScheduleLedger): string {
  const stored: StoredLedger = { v: SCHEDULE_LEDGER_FORMAT_VERSION, jobs: {} };
  for (const [job, entry] of Object.entries(ledger.jobs)) {
    const out: { s?: StoredSlot; c?: StoredSlot } = {};
    if (entry.lastStarted)
      out.s = [entry.lastStarted.scheduledAt.toISOString(), entry.lastStarted.token];
    if (entry.lastCompleted)
      out.c = [entry.lastCompleted.scheduledAt.toISOString(), entry.lastCompleted.token];
    stored.jobs[job] = out;
  }
  return JSON.stringify(stored);
}

function decodeSlot(value: unknown, maxToken: number, latestMs: number): LedgerSlot | undefined {
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [iso, token] = value as unknown[];
  if (
    typeof iso !== 'string' ||
    iso.length > 40 ||
    typeof token !== 'number' ||
    !Number.isSafeInteger(token) ||
    token < 0 ||
    token > maxToken
  ) {
    return undefined;
  }
  const scheduledAt = new Date(iso);
  const ms = scheduledAt.getTime();
  return Number.isNaN(ms) || ms < 0 || ms > latestMs ? undefined : { scheduledAt, token };
}

/**
 * Reads a stored ledger. Absent or empty text → an empty ledger, no problem. Longer than
 * {@link SCHEDULE_LEDGER_LIMITS}`.maxTextLength`, not JSON, not an object, or another format
 * version → an empty ledger with `problem` set. A malformed job entry — a name longer than
 * `maxJobNameLength`, a slot that is not `[ISO time, token]`, a token above `bounds.maxToken`,
 * a time before 1970 or more than `maxAheadMs` after `bounds.nowMs` — is dropped (the others
 * kept) with `problem` set, as are the jobs after the first `maxJobs`. `problem` is bounded
 * (it names at most three jobs). Never throws.
 */
export function decodeScheduleLedger(
  text: string | undefined,
  bounds: ScheduleLedgerReadBounds = {},
): DecodedScheduleLedger {
  if (text === undefined || text.trim() === '') return { ledger: emptyScheduleLedger() };
  const limits = SCHEDULE_LEDGER_LIMITS;
  if (text.length > limits.maxTextLength) {
    return {
      ledger: emptyScheduleLedger(),
      problem: scheduleLedgerMessages.tooLong(text.length, limits.maxTextLength),
    };
  }
  const maxToken = bounds.maxToken ?? Number.MAX_SAFE_INTEGER;
  const latestMs = (bounds.nowMs ?? Date.now()) + limits.maxAheadMs;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ledger: emptyScheduleLedger(), problem: scheduleLedgerMessages.notJson() };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ledger: emptyScheduleLedger(), problem: scheduleLedgerMessages.notAnObject() };
  }
  const { v, jobs } = parsed as { v?: unknown; jobs?: unknown };
  if (v !== SCHEDULE_LEDGER_FORMAT_VERSION) {
    return { ledger: emptyScheduleLedger(), problem: scheduleLedgerMessages.unknownVersion(v) };
  }
  if (typeof jobs !== 'object' || jobs === null || Array.isArray(jobs)) {
    return { ledger: emptyScheduleLedger(), problem: scheduleLedgerMessages.notAnObject() };
  }
  const ledger = emptyScheduleLedger();
  const dropped: string[] = [];
  let kept = 0;
  let beyondLimit = 0;
  for (const [job, raw] of Object.entries(jobs as Record<string, unknown>)) {
    if (kept >= limits.maxJobs) {
      beyondLimit++;
      continue;
    }
    if (typeof raw !== 'object' || raw === null || job.length > limits.maxJobNameLength) {
      dropped.push(job);
      continue;
    }
    const { s, c } = raw as { s?: unknown; c?: unknown };
    const entry: JobLedgerEntry = {};
    const started = s === undefined ? undefined : decodeSlot(s, maxToken, latestMs);
    const completed = c === undefined ? undefined : decodeSlot(c, maxToken, latestMs);
    if ((s !== undefined && !started) || (c !== undefined && !completed)) {
      dropped.push(job);
      continue;
    }
    if (started) entry.lastStarted = started;
    if (completed) entry.lastCompleted = completed;
    ledger.jobs[job] = entry;
    kept++;
  }
  const problems: string[] = [];
  if (dropped.length > 0) problems.push(scheduleLedgerMessages.droppedEntries(dropped));
  if (beyondLimit > 0) {
    problems.push(scheduleLedgerMessages.tooManyJobs(kept + beyondLimit, limits.maxJobs));
  }
  return problems.length === 0 ? { ledger } : { ledger, problem: problems.join('; ') };
}
