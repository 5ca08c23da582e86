/**
 * The shard assignment: which member owns each shard, under which fencing token, and which
 * shards are being taken from their owner. One object, written only by the coordinator (the
 * holder of the election's Lease), stored as text on the assignment Lease
 * (`<election>-shards`, annotation `nest-leader/shards`); every member reads it. Framework-free.
 */

import { isCandidateIdentity } from '../locks/peer-bounds.js';
import { parseStoredJson } from '../locks/stored-json.js';

/** The format version written in the text (`"v"`); a text of another version is not read. */
export const SHARD_ASSIGNMENT_FORMAT_VERSION = 1;

/** Bounds of a stored assignment (and of the `shards` option). */
export const SHARD_ASSIGNMENT_LIMITS = Object.freeze({
  /** Most shards an election may have. */
  maxShards: 4096,
  /** Most distinct owners named in one assignment (members of one election). */
  maxMembers: 256,
  /** Longest stored text read, in characters; longer is treated as unreadable. */
  maxTextLength: 200_000,
});

/** A member in one incarnation: its identity and its member Lease's `leaseTransitions`. */
export interface ShardOwner {
  /** The member's identity (holderIdentity of its member Lease). */
  readonly identity: string;
  /**
   * The member's epoch: `leaseTransitions` of its member Lease when the shard was granted. A
   * grant holds only for that epoch; the member's next epoch starts with nothing.
   */
  readonly epoch: number;
}

/** One shard's entry in the assignment. */
export interface ShardGrant {
  /** The owner, or `undefined` when nobody owns the shard. */
  readonly owner: ShardOwner | undefined;
  /**
   * The shard's fencing token: the assignment revision at which it was granted to `owner`
   * (0 when never granted). Strictly increases per shard, across coordinators.
   */
  readonly token: number;
  /**
   * Set while the shard is being taken from `owner`: the revision at which the coordinator asked
   * it to stop. The shard is granted to someone else only once the owner acknowledged a revision
   * at least this high, or its member Lease ended.
   */
  readonly revokedAt?: number;
}

/** The whole assignment. */
export interface ShardAssignment {
  /** Increases by one with every write; continues across coordinators. */
  readonly revision: number;
  /** Identity of the coordinator that wrote it. */
  readonly coordinator: string;
  /** One entry per shard, index = shard number. */
  readonly shards: readonly ShardGrant[];
}

/** An assignment nobody wrote yet: `shards` unowned shards at revision 0. */
export function emptyAssignment(shards: number): ShardAssignment {
  const none: ShardGrant = { owner: undefined, token: 0 };
  return { revision: 0, coordinator: '', shards: Array.from({ length: shards }, () => none) };
}

/**
 * The assignment as stored text: JSON `{"v":1,"rev":R,"by":"<coordinator>","m":[["<id>",epoch],…],
 * "s":[[count,owner,token(,revokedAt)],…]}` — owners as indexes into `m` (-1: none), shards as
 * runs of consecutive equal entries, so an assignment granted in blocks stays small (1,024 shards
 * over 8 members after balancing: a few hundred bytes; worst case a run per shard, ≈ 20 KB).
 */
export function formatShardAssignment(assignment: ShardAssignment): string {
  const members: [string, number][] = [];
  const indexOf = new Map<string, number>();
  const ownerIndex = (owner: ShardOwner | undefined): number => {
    if (!owner) return -1;
    const key = `${owner.epoch}/${owner.identity}`;
    let index = indexOf.get(key);
    if (index === undefined) {
      index = members.length;
      members.push([owner.identity, owner.epoch]);
      indexOf.set(key, index);
    }
    return index;
  };
  const runs: number[][] = [];
  let last: number[] | undefined;
  for (const grant of assignment.shards) {
    const entry = [ownerIndex(grant.owner), grant.token];
    if (grant.revokedAt !== undefined) entry.push(grant.revokedAt);
    if (last && last.length === entry.length + 1 && entry.every((v, i) => last![i + 1] === v)) {
      last[0] += 1;
    } else {
      last = [1, ...entry];
      runs.push(last);
    }
  }
  return JSON.stringify({
    v: SHARD_ASSIGNMENT_FORMAT_VERSION,
    rev: assignment.revision,
    by: assignment.coordinator,
    m: members,
    s: runs,
  });
}

/**
 * An assignment from stored text. Whatever is stored is hostile: `undefined` when absent, too
 * long, of another format version, or malformed in any way (owners not valid identities,
 * numbers not whole and in range, runs not adding up to exactly `shards`, a token above the
 * revision). Never throws.
 * @param shards - the election's number of shards; an assignment for another number is refused
 */
export function parseShardAssignment(value: unknown, shards: number): ShardAssignment | undefined {
  if (typeof value !== 'string' || value.length > SHARD_ASSIGNMENT_LIMITS.maxTextLength) {
    return undefined;
  }
  const fields = parseStoredJson(value);
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return undefined;
  const { v, rev, by, m, s } = fields as Record<string, unknown>;
  if (v !== SHARD_ASSIGNMENT_FORMAT_VERSION || !isCount(rev)) return undefined;
  if (typeof by !== 'string' || (by !== '' && !isCandidateIdentity(by))) return undefined;
  const members = parseMembers(m);
  if (!members || !Array.isArray(s)) return undefined;
  const grants: ShardGrant[] = [];
  for (const run of s as unknown[]) {
    if (!Array.isArray(run) || (run.length !== 3 && run.length !== 4)) return undefined;
    const [count, owner, token, revokedAt] = run as unknown[];
    if (!isCount(count) || count < 1 || grants.length + count > shards) return undefined;
    if (!Number.isInteger(owner) || (owner as number) < -1) return undefined;
    if ((owner as number) >= members.length) return undefined;
    if (!isCount(token) || token > rev) return undefined;
    if (revokedAt !== undefined && (!isCount(revokedAt) || revokedAt > rev || owner === -1)) {
      return undefined;
    }
    const grant: ShardGrant = {
      owner: owner === -1 ? undefined : members[owner as number],
      token,
      ...(revokedAt === undefined ? {} : { revokedAt }),
    };
    for (let i = 0; i < count; i++) grants.push(grant);
  }
  if (grants.length !== shards) return undefined;
  return { revision: rev, coordinator: by, shards: grants };
}

function parseMembers(value: unknown): ShardOwner[] | undefined {
  if (!Array.isArray(value) || value.length > SHARD_ASSIGNMENT_LIMITS.maxMembers) return undefined;
  const members: ShardOwner[] = [];
  for (const entry of value as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 2) return undefined;
    const [identity, epoch] = entry as unknown[];
    if (!isCandidateIdentity(identity) || !isCount(epoch)) return undefined;
    members.push({ identity, epoch });
  }
  return members;
}

/** A whole number ≥ 0 that a double holds exactly. */
function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** True when `a` and `b` name the same member incarnation (or both none). */
export function sameOwner(a: ShardOwner | undefined, b: ShardOwner | undefined): boolean {
  if (!a || !b) return a === b;
  return a.identity === b.identity && a.epoch === b.epoch;
}
