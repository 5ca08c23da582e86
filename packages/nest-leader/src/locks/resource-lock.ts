/**
 * The storage seam of the election: a record read and written with compare-and-swap,
 * as client-go's `resourcelock.Interface` (`Get`/`Create`/`Update` of a
 * `LeaderElectionRecord`). Locks never import the elector.
 */

import {
  type AdvertisedCandidate,
  copyAdvertisedCandidates,
  parseAdvertisedCandidates,
} from './advertised-candidates.js';
import {
  clampStartedAt,
  isCandidateIdentity,
  isPodTemplateHash,
  isStoredTransitions,
  MAX_MARKER_TEXT_LENGTH,
} from './peer-bounds.js';
import { parseStoredJson } from './stored-json.js';

/**
 * The election state kept in the lock: the fields of a Kubernetes `Lease.spec`.
 * Times are wall-clock times written for humans and other tools; the elector never
 * compares them with its own clock (it judges expiry by when it observed a change).
 */
export interface LeaseRecord {
  /** Identity of the current holder; `''` means free (released). */
  holderIdentity: string;
  /** How long, in whole seconds, candidates wait after observing a change before taking over. */
  leaseDurationSeconds: number;
  /** When the current holder acquired the lease (wall clock). */
  acquireTime?: Date;
  /** When the current holder last renewed the lease (wall clock). */
  renewTime?: Date;
  /** Number of changes of holder so far; the natural fencing token. */
  leaseTransitions: number;
  /**
   * Coordinated leader election strategy (`Lease.spec.strategy`, written by Kubernetes'
   * election controller); every write of the elector keeps it.
   */
  strategy?: string;
  /**
   * The candidate the Lease asks its holder to hand over to (`Lease.spec.preferredHolder`):
   * a leader it does not name ends its term and hands the Lease to it (see the
   * preferredHolder section of the package's docs/handoff-and-rollouts.md). Kept by every write but that handoff, which clears it.
   */
  preferredHolder?: string;
  /**
   * The schedule ledger of the election's leader-only jobs as stored text, kept beside the
   * election record (the Lease's annotation `nest-leader/schedule-ledger`, a field of a lease
   * file). Locks store and return it unread; it is not part of the election record, so a
   * change to it alone is not a renewal. `undefined` when absent.
   */
  scheduleLedger?: string;
  /**
   * Set on a record a leader wrote to hand the Lease to a chosen candidate (see
   * `LeaderElector.transferLeadership`): the record names that candidate as holder, and this
   * marker lets it take the Lease at once instead of waiting out a record it did not write.
   * Stored beside the election record (the Lease's annotation `nest-leader/handoff`, a field of
   * a lease file); like the ledger, not part of the election record. `undefined` when absent.
   */
  handoff?: LeaseHandoff;
  /**
   * What the candidates of this election advertise about themselves (pod template hash,
   * priority, start time), for the leader to choose whom to hand off to
   * (`LeaderElector.transferLeadership()` without a target, handoff on stop). Each candidate
   * adds its entry once when it starts and removes it when it stops; the leader's own writes
   * carry the list along. Stored beside the election record (the Lease's annotation
   * `nest-leader/candidates`) only by locks whose {@link ResourceLock.storesCandidates} is
   * true; not part of the election record. `undefined` when absent.
   */
  candidates?: AdvertisedCandidate[];
  /**
   * The newest pod template whose leader was lost without a handoff (its Lease expired, or a
   * handoff to it was never taken): leaders of other templates do not yield to it
   * (`yieldToNewerTemplate`) for a backoff that doubles with `failures`, so a crash-looping new
   * template cannot bounce leadership back and forth. Written by the candidate that takes such a
   * Lease over and carried along by every write; stored beside the election record (the Lease's
   * annotation `nest-leader/template-backoff`), not part of it. `undefined` when absent.
   */
  templateBackoff?: TemplateBackoff;
  /**
   * A handoff offered by the holder to one candidate, and that candidate's acceptance (see
   * `handoff-offer.ts`): the leader hands the Lease over only to a candidate that accepted, so
   * never to one that is gone. Stored beside the election record (the Lease's annotation
   * `nest-leader/handoff-offer`) only by locks whose {@link ResourceLock.storesCandidates} is
   * true; not part of the election record. `undefined` when absent.
   */
  handoffOffer?: LeaseHandoffOffer;
  /**
   * A sharded election's text (see `src/sharding/`), stored beside the election record (the
   * Lease's annotation `nest-leader/shards`): the shard assignment on the assignment Lease, the
   * member's acknowledgement on a member Lease. Locks store and return it unread; the elector
   * carries it along unchanged. Not part of the election record. `undefined` when absent.
   */
  shards?: string;
}

/** See {@link LeaseRecord.handoffOffer}. */
export interface LeaseHandoffOffer {
  /** The candidate offered the Lease. */
  to: string;
  /** The holder that offers it: the record's `holderIdentity` when written. */
  from: string;
  /**
   * The `startedAt` of `to`'s advertisement the holder chose (which incarnation of `to` it
   * offers the Lease to): a candidate accepts only an offer naming its own start, so a
   * restarted container of the same pod — same identity — never accepts an offer earned by
   * the one before it. `undefined` in offers of nest-leader versions before it (accepted by
   * any incarnation, as then).
   */
  toStartedAt?: Date;
  /**
   * `leaseTransitions` of the record the offer was written with: on a record with another holder
   * or other transitions the offer is stale and means nothing.
   */
  leaseTransitions: number;
  /** Set by `to` when it accepts: it is alive and will take the Lease once handed to it. */
  accepted?: true;
}

/** See {@link LeaseRecord.templateBackoff}. */
export interface TemplateBackoff {
  /** The `podTemplateHash` whose leader was lost. */
  podTemplateHash: string;
  /** How many of its leaders were lost in a row (≥ 1); the backoff doubles with each. */
  failures: number;
}

/** See {@link LeaseRecord.handoff}. */
export interface LeaseHandoff {
  /** The candidate the Lease is handed to: the record's `holderIdentity` when written. */
  to: string;
  /**
   * `leaseTransitions` of the record the marker was written with: on a record with other
   * transitions (someone took the Lease since) the marker is stale and means nothing.
   */
  leaseTransitions: number;
  /**
   * The leader chose the target by preference (`transferLeadership()` without a target, the
   * handoff on stop) rather than being told whom: the target's term starts with reason
   * `preferred` instead of `handoff`.
   */
  preferred?: true;
}

/** The three requests a lock serves, as client-go's resourcelock verbs. */
export type LockOperation = 'get' | 'create' | 'update';

/**
 * What a lock could prove about the holder's process when it read the record (only `FileLock`
 * can: see its holder-process proof). `gone`: the OS proves the holder's process no longer
 * runs, so the record may be taken at once; `alive`: it runs; `unknown`: nothing can be proven
 * from here (`reason` says why), only the lease's expiry can tell.
 */
export type HolderLiveness =
  | { state: 'alive' }
  | { state: 'gone'; /** What proves it, e.g. `PID 123 no longer exists`. */ proof: string }
  | { state: 'unknown'; /** Why nothing can be proven. */ reason: string };

/** A record as stored, with the opaque version to pass to {@link ResourceLock.update}. */
export interface VersionedLeaseRecord {
  record: LeaseRecord;
  /** Opaque version (a Lease's `resourceVersion`); changes with every write. */
  version: string;
  /**
   * The holder's process as the lock could check it when reading; absent for locks that cannot
   * (Leases) and for records without a holder. Not part of the record: never written back.
   */
  holderLiveness?: HolderLiveness;
}

/**
 * Where the election record lives. Implementations: `LeaseLock` (Kubernetes),
 * `FileLock` (one host), `MemoryLock` (tests, from `nest-leader/testing`).
 *
 * Every method honours `signal`: when it aborts, the returned promise rejects soon with
 * `signal.reason`. Other failures reject with `LockConflictError` (lost a race) or an
 * implementation error such as `LeaseApiError`.
 */
export interface ResourceLock {
  /** Human-readable name used in logs and messages, e.g. `Lease default/billing-worker`. */
  readonly description: string;
  /** Reads the record; resolves `undefined` when it does not exist. */
  get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined>;
  /**
   * Creates the record; resolves its new version.
   * @throws LockConflictError if it already exists.
   */
  create(record: LeaseRecord, signal?: AbortSignal): Promise<string>;
  /**
   * Replaces the record if it is still at `version`; resolves the new version.
   * @throws LockConflictError if the record changed since `version` was read.
   */
  update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string>;
  /**
   * True when the lock stores {@link LeaseRecord.candidates} and a write that changes nothing
   * else leaves the stored election record exactly as it was (so candidates other than the
   * holder may write their advertisement; others would see no renewal). Absent or false: the
   * elector never writes advertisements to it, and there is no preference to hand off by.
   */
  readonly storesCandidates?: boolean;
}

/** A deep copy of a record, so callers and locks never share mutable `Date`s. */
export function copyLeaseRecord(record: LeaseRecord): LeaseRecord {
  const copy: LeaseRecord = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
  };
  if (record.acquireTime) copy.acquireTime = new Date(record.acquireTime.getTime());
  if (record.renewTime) copy.renewTime = new Date(record.renewTime.getTime());
  if (record.strategy !== undefined) copy.strategy = record.strategy;
  if (record.preferredHolder !== undefined) copy.preferredHolder = record.preferredHolder;
  if (record.scheduleLedger !== undefined) copy.scheduleLedger = record.scheduleLedger;
  if (record.handoff !== undefined) copy.handoff = { ...record.handoff };
  if (record.candidates !== undefined)
    copy.candidates = copyAdvertisedCandidates(record.candidates);
  if (record.templateBackoff !== undefined) copy.templateBackoff = { ...record.templateBackoff };
  if (record.handoffOffer !== undefined) copy.handoffOffer = copyOffer(record.handoffOffer);
  if (record.shards !== undefined) copy.shards = record.shards;
  return copy;
}

function copyOffer(offer: LeaseHandoffOffer): LeaseHandoffOffer {
  const copy = { ...offer };
  if (offer.toStartedAt) copy.toStartedAt = new Date(offer.toStartedAt.getTime());
  return copy;
}

/**
 * A record from stored fields of unknown shape (a Lease's `spec`, a lease file): missing or
 * malformed fields read as a free holder, zero duration and transitions, no times. Never
 * throws: foreign records may hold anything.
 */
export function parseLeaseRecord(fields: Record<string, unknown>): LeaseRecord {
  const record: LeaseRecord = {
    holderIdentity: typeof fields.holderIdentity === 'string' ? fields.holderIdentity : '',
    leaseDurationSeconds: finiteOrZero(fields.leaseDurationSeconds),
    leaseTransitions: finiteOrZero(fields.leaseTransitions),
  };
  const acquireTime = parseLeaseTime(fields.acquireTime);
  const renewTime = parseLeaseTime(fields.renewTime);
  if (acquireTime) record.acquireTime = acquireTime;
  if (renewTime) record.renewTime = renewTime;
  if (typeof fields.strategy === 'string') record.strategy = fields.strategy;
  if (typeof fields.preferredHolder === 'string') record.preferredHolder = fields.preferredHolder;
  if (typeof fields.scheduleLedger === 'string') record.scheduleLedger = fields.scheduleLedger;
  const handoff = parseLeaseHandoff(fields.handoff);
  if (handoff) record.handoff = handoff;
  const candidates = parseAdvertisedCandidates(fields.candidates);
  if (candidates) record.candidates = candidates;
  const templateBackoff = parseTemplateBackoff(fields.templateBackoff);
  if (templateBackoff) record.templateBackoff = templateBackoff;
  const handoffOffer = parseLeaseHandoffOffer(fields.handoffOffer);
  if (handoffOffer) record.handoffOffer = handoffOffer;
  if (typeof fields.shards === 'string') record.shards = fields.shards;
  return record;
}

/** The most failures a stored {@link TemplateBackoff} may claim; more is read as this many. */
export const MAX_TEMPLATE_BACKOFF_FAILURES = 32;

/**
 * A template backoff (see {@link LeaseRecord.templateBackoff}) from a stored value: an object,
 * or its JSON text (a Lease annotation) of at most `MAX_MARKER_TEXT_LENGTH` characters;
 * `undefined` when absent, too long or malformed (a hash that is not a label value, failures not
 * a whole number ≥ 1). Never throws: foreign writers may store anything; failures are capped at
 * {@link MAX_TEMPLATE_BACKOFF_FAILURES}.
 */
export function parseTemplateBackoff(value: unknown): TemplateBackoff | undefined {
  const fields = parseMarker(value);
  if (!fields) return undefined;
  const { podTemplateHash, failures } = fields;
  if (!isPodTemplateHash(podTemplateHash)) return undefined;
  if (typeof failures !== 'number' || !Number.isInteger(failures) || failures < 1) return undefined;
  return { podTemplateHash, failures: Math.min(failures, MAX_TEMPLATE_BACKOFF_FAILURES) };
}

/**
 * A handoff marker (see {@link LeaseRecord.handoff}) from a stored value: an object, or its
 * JSON text (a Lease annotation) of at most `MAX_MARKER_TEXT_LENGTH` characters; `undefined`
 * when absent, too long or malformed (`to` not a valid identity, `leaseTransitions` not a whole
 * number in the int32 range). Never throws.
 */
export function parseLeaseHandoff(value: unknown): LeaseHandoff | undefined {
  const fields = parseMarker(value);
  if (!fields) return undefined;
  const { to, leaseTransitions, preferred } = fields;
  if (!isCandidateIdentity(to) || !isStoredTransitions(leaseTransitions)) return undefined;
  return preferred === true ? { to, leaseTransitions, preferred } : { to, leaseTransitions };
}

/**
 * A handoff offer (see {@link LeaseRecord.handoffOffer}) from a stored value, bounded as
 * {@link parseLeaseHandoff} (`from` an identity too, `toStartedAt` a time clamped as an
 * advertisement's); `undefined` when absent or malformed — a `toStartedAt` that is present but
 * not a time makes the whole offer malformed, so nobody accepts it. Never throws.
 */
export function parseLeaseHandoffOffer(value: unknown): LeaseHandoffOffer | undefined {
  const fields = parseMarker(value);
  if (!fields) return undefined;
  const { to, from, leaseTransitions, accepted } = fields;
  if (!isCandidateIdentity(to) || !isCandidateIdentity(from)) return undefined;
  if (!isStoredTransitions(leaseTransitions)) return undefined;
  const offer: LeaseHandoffOffer = { to, from, leaseTransitions };
  if (fields.toStartedAt !== undefined) {
    const toStartedAt =
      typeof fields.toStartedAt === 'string' ? parseLeaseTime(fields.toStartedAt) : undefined;
    if (!toStartedAt) return undefined;
    offer.toStartedAt = clampStartedAt(toStartedAt);
  }
  if (accepted === true) offer.accepted = accepted;
  return offer;
}

/** The object of a stored marker (text of at most `MAX_MARKER_TEXT_LENGTH`), if it is one. */
function parseMarker(value: unknown): Record<string, unknown> | undefined {
  if (typeof value === 'string' && value.length > MAX_MARKER_TEXT_LENGTH) return undefined;
  const fields = parseStoredJson(value);
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return undefined;
  return fields as Record<string, unknown>;
}

function finiteOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * Parses a time read back from storage (a string, e.g. a Lease's MicroTime, which
 * client-node leaves unparsed, or a `Date`); `undefined` when absent or unparseable.
 * Never throws: foreign records may hold anything.
 */
export function parseLeaseTime(value: unknown): Date | undefined {
  if (typeof value !== 'string' && typeof value !== 'number' && !(value instanceof Date)) {
    return undefined;
  }
  if (value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
