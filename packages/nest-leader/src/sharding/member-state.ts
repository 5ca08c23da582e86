/**
 * What a member Lease says beside its election record (annotation `nest-leader/shards`): the
 * highest assignment revision the member has applied, and how its holder was cleared. And the
 * member Lease's name. Framework-free.
 */

import { parseStoredJson } from '../locks/stored-json.js';
import { fnv1a32 } from './shard-hash.js';

/** Longest member state text read, in characters; longer reads as no state. */
export const MAX_MEMBER_STATE_TEXT_LENGTH = 256;

/** The member's part of the handshake, as stored on its member Lease. */
export interface MemberState {
  /**
   * The highest assignment revision the member has applied: every shard that revision does not
   * grant to it has stopped (its work aborted and drained, or its drain timed out). 0: none yet.
   */
  readonly ack: number;
  /** The member cleared its holder itself on a graceful stop, after stopping every shard. */
  readonly released?: true;
  /**
   * The coordinator cleared the holder (the member's Lease expired by its observation, or the
   * member did not acknowledge a revoke in time); the member ends its epoch when it sees it.
   */
  readonly evicted?: true;
}

/** The state as stored text: JSON `{"ack":R}` plus `"released":true` or `"evicted":true`. */
export function formatMemberState(state: MemberState): string {
  return JSON.stringify(state);
}

/**
 * A member state from stored text; hostile input reads as `{ ack: 0 }` (nothing acknowledged,
 * neither released nor evicted), never throws.
 */
export function parseMemberState(value: unknown): MemberState {
  if (typeof value !== 'string' || value.length > MAX_MEMBER_STATE_TEXT_LENGTH) return { ack: 0 };
  const fields = parseStoredJson(value);
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return { ack: 0 };
  const { ack, released, evicted } = fields as Record<string, unknown>;
  const state: { ack: number; released?: true; evicted?: true } = {
    ack: Number.isSafeInteger(ack) && (ack as number) >= 0 ? (ack as number) : 0,
  };
  if (released === true) state.released = true;
  if (evicted === true) state.evicted = true;
  return state;
}

/**
 * The name of the member Lease of `identity` in the sharded election `election`:
 * `<election>-m-<fnv1a32 of the identity's UTF-8, 8 hex digits>` (identities may hold
 * characters a Lease name may not). Two identities with the same hash would share one Lease: the
 * second waits as a candidate of a held Lease (1 in 2^32 per pair).
 */
export function memberLeaseName(election: string, identity: string): string {
  const hash = fnv1a32(new TextEncoder().encode(identity)).toString(16).padStart(8, '0');
  return `${election}-m-${hash}`;
}

/** The name of the assignment Lease of the sharded election `election`: `<election>-shards`. */
export function assignmentLeaseName(election: string): string {
  return `${election}-shards`;
}
