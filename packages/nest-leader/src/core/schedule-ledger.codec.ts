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

function decodeSlot(value: unknown): LedgerSlot | undefined {
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [iso, token] = value as unknown[];
  if (
    typeof iso !== 'string' ||
    typeof token !== 'number' ||
    !Number.isSafeInteger(token) ||
    token < 0
  ) {
    return undefined;
  }
  const scheduledAt = new Date(iso);
  return Number.isNaN(scheduledAt.getTime()) ? undefined : { scheduledAt, token };
}

/**
 * Reads a stored ledger. Absent or empty text → an empty ledger, no problem. Not JSON, not
 * an object, or another format version → an empty ledger with `problem` set. A malformed
 * job entry is dropped (the others kept) with `problem` set.
 */
export function decodeScheduleLedger(text: string | undefined): DecodedScheduleLedger {
  if (text === undefined || text.trim() === '') return { ledger: emptyScheduleLedger() };
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
  for (const [job, raw] of Object.entries(jobs as Record<string, unknown>)) {
    if (typeof raw !== 'object' || raw === null) {
      dropped.push(job);
      continue;
    }
    const { s, c } = raw as { s?: unknown; c?: unknown };
    const entry: JobLedgerEntry = {};
    const started = s === undefined ? undefined : decodeSlot(s);
    const completed = c === undefined ? undefined : decodeSlot(c);
    if ((s !== undefined && !started) || (c !== undefined && !completed)) {
      dropped.push(job);
      continue;
    }
    if (started) entry.lastStarted = started;
    if (completed) entry.lastCompleted = completed;
    ledger.jobs[job] = entry;
  }
  return dropped.length === 0
    ? { ledger }
    : { ledger, problem: scheduleLedgerMessages.droppedEntries(dropped) };
}
