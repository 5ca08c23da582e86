/**
 * The texts of sharded elections: log lines of the member Lease, the coordinator and the
 * member's shards, and the rules of their options.
 */

import type { LeaderTermEndReason } from '../errors.interfaces.js';
import { errorText, quoted, seconds } from '../format.js';

/** Log lines; `lock` is a lock's description, `election` the sharded election's name. */
export const shardingMessages = {
  memberLoopFailed: (lock: string, error: unknown) =>
    `The member loop of ${lock} failed: ${errorText(error)}. This member owns no shard until restarted.`,
  memberReleased: (lock: string) => `Released ${lock}: its shards may be granted at once.`,
  memberReleaseFailed: (lock: string, error: unknown) =>
    `Could not release ${lock} (${errorText(error)}); its shards move once it expires.`,
  memberRequestFailed: (lock: string, operation: string, error: unknown) =>
    `${operation} of ${lock} failed: ${errorText(error)}. Retrying.`,
  memberLeaseHeld: (lock: string, holder: string) =>
    `${lock} names ${quoted(holder)}: waiting for it to be released or to expire before taking it.`,
  memberDeadlineExceeded: (lock: string, renewDeadlineMs: number) =>
    `${lock} was not renewed within renewDeadline (${seconds(renewDeadlineMs)}): every shard of this member stops.`,
  memberEpochStarted: (lock: string, epoch: number) => `Holding ${lock} (member epoch ${epoch}).`,
  memberEpochLost: (lock: string, epoch: number, reason: LeaderTermEndReason) =>
    `Member epoch ${epoch} of ${lock} ended (${reason}): every shard of this member stops.`,
  coordinating: (election: string, token: number) =>
    `Coordinating sharded election ${quoted(election)} (coordinator term ${token}).`,
  coordinatorRoundFailed: (election: string, error: unknown) =>
    `A coordination round of ${quoted(election)} failed: ${errorText(error)}. Retrying.`,
  memberEvicted: (
    election: string,
    identity: string,
    epoch: number,
    reason: 'expired' | 'no-ack',
  ) =>
    reason === 'expired'
      ? `Member ${quoted(identity)} (epoch ${epoch}) of ${quoted(election)} stopped renewing its Lease: its shards move now.`
      : `Member ${quoted(identity)} (epoch ${epoch}) of ${quoted(election)} did not acknowledge a revoke in time: evicted; its shards move once its epoch is over.`,
  evictionFailed: (election: string, lease: string, error: unknown) =>
    `Eviction of ${lease} in ${quoted(election)} not written (${errorText(error)}); judging it again.`,
  assignmentUnreadable: (election: string, shards: number) =>
    `The shard assignment of ${quoted(election)} is unreadable or not for ${shards} shards: no shard is granted ` +
    'until it is fixed (every member stops the shards it cannot prove it owns). If the number of shards ' +
    `changed, delete the Lease ${quoted(`${election}-shards`)} once every member runs the new number.`,
  assignmentWritten: (election: string, revision: number) =>
    `Wrote the shard assignment of ${quoted(election)} (revision ${revision}).`,
  assignmentWriteFailed: (election: string, error: unknown) =>
    `Could not write the shard assignment of ${quoted(election)}: ${errorText(error)}. Reading it again.`,
  assignmentReadFailed: (election: string, error: unknown) =>
    `Could not read the shard assignment of ${quoted(election)}: ${errorText(error)}. Retrying.`,
  shardStarted: (election: string, shard: number, token: number) =>
    `Owning shard ${shard} of ${quoted(election)} (token ${token}).`,
  shardStopped: (election: string, shard: number, token: number, reason: string) =>
    `Stopped shard ${shard} of ${quoted(election)} (token ${token}): ${reason}.`,
  drainTimedOut: (election: string, count: number, drainTimeoutMs: number) =>
    `${count} revoked shard(s) of ${quoted(election)} still draining after drainTimeout (${seconds(drainTimeoutMs)}); acknowledging: their signals are aborted.`,
  callbackFailed: (election: string, callback: string, error: unknown) =>
    `${callback} of ${quoted(election)} threw: ${errorText(error)}.`,
};

/** Rules of the sharded election's options, for `InvalidLeaderElectionOptionError`. */
export const shardingOptionRules = {
  shards: (max: number) => `must be a whole number from 1 to ${max}`,
  name: (max: number) =>
    `must be a Lease name (lowercase letters, digits, '-' and '.') of at most ${max} characters, so that its member Leases' names fit`,
  drainTimeoutSeconds: 'must be a positive number of seconds',
  store: 'must be a ShardLeaseStore (lease(name) and list(prefix))',
  identity: 'must be a non-empty string of at most 128 printable characters',
};
