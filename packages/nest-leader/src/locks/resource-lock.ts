/**
 * The storage seam of the election: a record read and written with compare-and-swap,
 * as client-go's `resourcelock.Interface` (`Get`/`Create`/`Update` of a
 * `LeaderElectionRecord`). Locks never import the elector.
 */

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
  /** Coordinated leader election strategy (`Lease.spec.strategy`); preserved, never interpreted. */
  strategy?: string;
  /** Preferred holder (`Lease.spec.preferredHolder`); preserved, never interpreted. */
  preferredHolder?: string;
  /**
   * The schedule ledger of the election's leader-only jobs as stored text, kept beside the
   * election record (the Lease's annotation `nest-leader/schedule-ledger`, a field of a lease
   * file). Locks store and return it unread; it is not part of the election record, so a
   * change to it alone is not a renewal. `undefined` when absent.
   */
  scheduleLedger?: string;
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
  return record;
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
