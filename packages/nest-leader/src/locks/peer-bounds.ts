/**
 * Bounds on what peers store beside the election record (the Lease annotations
 * `nest-leader/candidates`, `nest-leader/handoff`, `nest-leader/handoff-offer`): anyone who may
 * update the Lease can write them, so a reader takes them as hostile — capped in size and count,
 * identities checked, numbers clamped — and a malformed value is ignored, never fatal.
 */

/** Longest candidate identity (ours, and any a peer stores), in characters. */
export const MAX_IDENTITY_LENGTH = 128;

/**
 * At most this many advertisements are kept, on read and on write: a candidate killed without
 * stopping leaves its entry until a handoff offer to it goes unanswered or a takeover removes it;
 * the cap bounds the annotation if many do. Adding one more drops the earliest-started entries;
 * a stored list longer than this keeps its latest-started entries.
 */
export const MAX_ADVERTISED_CANDIDATES = 32;

/**
 * Longest stored text of the candidates annotation read, in characters: 32 entries of the
 * longest identity and hash fit with room to spare; a longer text is ignored as a whole (read
 * as no advertisements; the next write of the list removes it).
 */
export const MAX_CANDIDATES_TEXT_LENGTH = 16_384;

/** Longest stored text of a handoff marker or offer read, in characters; longer is ignored. */
export const MAX_MARKER_TEXT_LENGTH = 1_024;

/** Longest `podTemplateHash` (a Kubernetes label value). */
export const MAX_POD_TEMPLATE_HASH_LENGTH = 63;

/** Largest `leaseTransitions` a Lease holds (`Lease.spec.leaseTransitions` is an int32). */
export const MAX_STORED_TRANSITIONS = 2 ** 31 - 1;

/** Control, format (bidi overrides, zero-width) and line/paragraph separator characters. */
export const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** A Kubernetes label value (non-empty). */
const LABEL_VALUE = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/**
 * True for a valid candidate identity: a string of 1 to {@link MAX_IDENTITY_LENGTH} printable
 * characters (an identity with a newline would forge log lines).
 */
export function isCandidateIdentity(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= MAX_IDENTITY_LENGTH &&
    !UNPRINTABLE.test(value)
  );
}

/** True for a valid `podTemplateHash`: a Kubernetes label value of at most 63 characters. */
export function isPodTemplateHash(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= MAX_POD_TEMPLATE_HASH_LENGTH &&
    LABEL_VALUE.test(value)
  );
}

/** A stored priority clamped to the int32 range the option allows; `undefined` if not finite. */
export function clampPriority(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return Math.min(2 ** 31 - 1, Math.max(-(2 ** 31), Math.trunc(value)));
}

/** A stored `leaseTransitions` if it is a whole number from 0 to the int32 maximum. */
export function isStoredTransitions(value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= 0 &&
    value <= MAX_STORED_TRANSITIONS
  );
}

/**
 * Earliest and latest advertised time (`startedAt`, `podCreationTimestamp`) kept as read (ms
 * since the epoch): 2000-01-01 to 2200-01-01.
 */
const STARTED_AT_RANGE_MS = [Date.UTC(2000, 0, 1), Date.UTC(2200, 0, 1)] as const;

/** A valid stored time clamped to 2000-01-01 … 2200-01-01 (a copy). */
export function clampStartedAt(value: Date): Date {
  const [earliest, latest] = STARTED_AT_RANGE_MS;
  return new Date(Math.min(latest, Math.max(earliest, value.getTime())));
}
