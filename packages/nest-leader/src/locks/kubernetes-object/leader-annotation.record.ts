/**
 * client-go's historical election record, stored as JSON in the annotation
 * `control-plane.alpha.kubernetes.io/leader` of a ConfigMap (or Endpoints) before Leases
 * (`resourcelock.LeaderElectionRecord`, removed from client-go in 1.24/1.28). Reading is
 * lenient, because other implementations wrote variants of it:
 *
 * - client-go: `holderIdentity`, `leaseDurationSeconds` (int), `acquireTime`, `renewTime`
 *   (RFC 3339), `leaderTransitions` — note *leader*, not *lease*Transitions;
 * - the Python `kubernetes` client's ConfigMapLock: `leaseDurationSeconds` as a string,
 *   naive local timestamps (`2026-11-22 11:30:00.123456`), no `leaderTransitions`;
 * - fabric8 (Java, Spring Cloud Kubernetes): `leaseDuration`, a `java.time.Duration` as
 *   seconds (`15.000000000`) or ISO 8601 (`PT15S`).
 */
import { type LeaseRecord, parseLeaseTime } from '../resource-lock.js';
import { boundedText } from '../../format.js';

/** The annotation key client-go and its ports store the record under. */
export const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

/**
 * `holderIdentity` reported for a record that is not a JSON object: someone we cannot read may
 * hold the lock, so it is not free — it expires by observed time like any other holder.
 */
export const UNREADABLE_HOLDER = '(unreadable leader annotation)';

/** The outcome of reading an annotation. */
export type ParsedLeaderAnnotation =
  { ok: true; record: LeaseRecord } | { ok: false; record: LeaseRecord; reason: string };

/**
 * Reads the annotation's value. Absent or empty → a free record. Not a JSON object → `ok:
 * false`, with a record held by {@link UNREADABLE_HOLDER} and no duration (the elector then
 * waits its own leaseDuration from the last change it observed). Never throws.
 */
export function parseLeaderAnnotation(value: string | undefined): ParsedLeaderAnnotation {
  if (value === undefined || value.trim() === '') {
    return {
      ok: true,
      record: { holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 },
    };
  }
  let fields: unknown;
  try {
    fields = JSON.parse(value);
  } catch (error) {
    // The parser quotes the text: a peer's, so one bounded line.
    return unreadable(value, `not JSON (${boundedText((error as Error).message, 120)})`);
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
    return unreadable(value, `not a JSON object`);
  }
  const f = fields as Record<string, unknown>;
  const record: LeaseRecord = {
    holderIdentity: typeof f.holderIdentity === 'string' ? f.holderIdentity : '',
    leaseDurationSeconds:
      durationSeconds(f.leaseDurationSeconds) ?? durationSeconds(f.leaseDuration) ?? 0,
    leaseTransitions: transitions(f.leaderTransitions) ?? transitions(f.leaseTransitions) ?? 0,
  };
  const acquireTime = parseLeaseTime(f.acquireTime);
  const renewTime = parseLeaseTime(f.renewTime);
  if (acquireTime) record.acquireTime = acquireTime;
  if (renewTime) record.renewTime = renewTime;
  return { ok: true, record };
}

/** The annotation's value for `record`, as client-go wrote it (times with six fractional digits). */
export function formatLeaderAnnotation(record: LeaseRecord): string {
  return JSON.stringify({
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime ? rfc3339Micro(record.acquireTime) : undefined,
    renewTime: record.renewTime ? rfc3339Micro(record.renewTime) : undefined,
    leaderTransitions: record.leaseTransitions,
  });
}

/**
 * The record of an unreadable annotation. The elector sees a record change only when its
 * fields change, so `renewTime` carries a fingerprint of the raw text (not a real time): every
 * rewrite by whoever writes it counts as a renewal, and only an annotation left unchanged for
 * leaseDuration is taken over.
 */
function unreadable(raw: string, reason: string): ParsedLeaderAnnotation {
  return {
    ok: false,
    reason,
    record: {
      holderIdentity: UNREADABLE_HOLDER,
      leaseDurationSeconds: 0,
      leaseTransitions: 0,
      renewTime: new Date(fingerprint(raw)),
    },
  };
}

/** FNV-1a (32 bit) of `text`: a cheap fingerprint, not a security measure. */
function fingerprint(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** `2026-01-30T10:00:00.123000Z`: RFC 3339 in UTC, parsed by Go, Java and Python alike. */
function rfc3339Micro(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Seconds from a number, a numeric string, or an ISO 8601 duration (`PT15S`, `PT1M30.5S`). */
function durationSeconds(value: unknown): number | undefined {
  let seconds: number | undefined;
  if (typeof value === 'number') seconds = value;
  else if (typeof value === 'string' && value.trim() !== '') {
    const iso = /^PT(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?$/i.exec(
      value.trim(),
    );
    if (iso && (iso[1] || iso[2] || iso[3])) {
      seconds = Number(iso[1] ?? 0) * 3600 + Number(iso[2] ?? 0) * 60 + Number(iso[3] ?? 0);
    } else seconds = Number(value);
  }
  return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

function transitions(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
