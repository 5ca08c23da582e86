/**
 * Targeted handoff: how a leader writes the Lease so that one chosen candidate takes it at
 * once while every other candidate — nest-leader or client-go — waits, and how a candidate
 * recognises a Lease handed to it. The elector calls these around the end of a term
 * (`LeaderElector.transferLeadership`). Framework-free.
 *
 * The handoff record names the target as `holderIdentity`, with `leaseTransitions + 1`,
 * `acquireTime = renewTime = now`, `leaseDurationSeconds` = the handoff's bound, no
 * `preferredHolder` (the handoff fulfils or overrides it), `strategy` kept, and a marker
 * (`LeaseRecord.handoff`, the Lease annotation `nest-leader/handoff`) naming the target and
 * those transitions. To every candidate but the target it is an ordinary Lease held by someone
 * else: they wait until it expires by their own observation. The target takes it at its next
 * read with a new term whose fencing token is the handoff record's `leaseTransitions` (the
 * handoff counted the transition; no other term can have that value), removing the marker.
 *
 * Why a record naming the target rather than a released one plus `spec.preferredHolder`: every
 * candidate already waits for a Lease held by someone else, so nobody — nest-leader of any
 * version or client-go — can take it in between, and a dead target costs exactly the bound; a
 * released Lease would be taken at once by any client-go candidate (`preferredHolder` asks a
 * leader to hand over: it is honoured with this very write, which clears it).
 *
 * - Other nest-leader candidates, the old leader included (it campaigns again afterwards, even
 *   with `onLost: 'stop'`), wait until the record expires by their observation: the bound after
 *   they saw it; then any of them may take it, as an expired Lease.
 * - A client-go candidate that is not the target sees a Lease held by `to` and renewed just
 *   now: it waits `leaseDurationSeconds` from when it saw the change, then takes it
 *   (`leaseTransitions + 1`), writing the annotation back unchanged — harmless, as the marker's
 *   transitions no longer match. A client-go candidate named `to` treats the Lease as its own
 *   and renews it at once, keeping the handoff's `leaseTransitions`.
 * - Locks without a place for the marker (ConfigMap, sidecar) drop it: the target then waits
 *   the bound like everyone else.
 */

import {
  InvalidLeaderElectionOptionError,
  LeadershipTransferError,
  LockConflictError,
} from '../../errors.js';
import type { LeaseRecord, VersionedLeaseRecord } from '../../locks/resource-lock.js';
import type { LeadershipChangeReason } from '../election-observer.js';
import { handoffRules } from './leadership-handoff.messages.js';

/** Options of `LeaderElector.transferLeadership`. */
export interface TransferLeadershipOptions {
  /**
   * How long, in whole seconds, the Lease is reserved for the target: written as the handoff
   * record's `leaseDurationSeconds`, so every other candidate waits that long after seeing the
   * handoff before it may take the Lease (the target may take it at once, and until then).
   * Default and maximum: this elector's leaseDuration (a longer reservation would let a dead
   * or unknown target keep the Lease leaderless longer than a crashed leader could). Keep it
   * longer than the target needs to notice (with polling, its retryPeriod × 1.2 plus a
   * request's latency).
   */
  leaseDurationSeconds?: number;
}

/** How many times a handoff re-reads after a conflict before giving up (as release). */
export const MAX_HANDOFF_ATTEMPTS = 3;

/**
 * The `leaseDurationSeconds` of a handoff record from the options: the bound, capped at the
 * election's own leaseDuration so that no caller (an HTTP request to the sidecar, a bug) can
 * reserve the Lease for a target — possibly one that never takes it — longer than a crashed
 * leader would keep it.
 * @param leaseDurationMs - the elector's leaseDuration, ms: the default and the cap
 * @throws InvalidLeaderElectionOptionError naming `leaseDurationSeconds` if it is not a whole
 *   number ≥ 1, or exceeds the elector's leaseDuration (whole seconds).
 */
export function handoffLeaseDurationSeconds(
  options: TransferLeadershipOptions,
  leaseDurationMs: number,
): number {
  const value = options.leaseDurationSeconds;
  const maxSeconds = Math.ceil(leaseDurationMs / 1000);
  if (value === undefined) return maxSeconds;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidLeaderElectionOptionError(
      'leaseDurationSeconds',
      handoffRules.wholeSeconds,
      value,
    );
  }
  if (value > maxSeconds) {
    throw new InvalidLeaderElectionOptionError(
      'leaseDurationSeconds',
      handoffRules.atMostLeaseDuration(maxSeconds),
      value,
    );
  }
  return value;
}

/**
 * Checks the target of a transfer.
 * @throws InvalidLeaderElectionOptionError if `to` is not a non-empty string or is `identity`.
 */
export function validateHandoffTarget(to: unknown, identity: string): asserts to is string {
  if (typeof to !== 'string' || to === '') {
    throw new InvalidLeaderElectionOptionError('to', 'must be a non-empty candidate identity', to);
  }
  if (to === identity) {
    throw new InvalidLeaderElectionOptionError(
      'to',
      'must name another candidate, not this one',
      to,
    );
  }
}

/**
 * True when `record` is a live handoff to `identity`: it names `identity` as holder and
 * carries a marker for `identity` written with these very `leaseTransitions` (a marker left
 * behind on a later record — client-go candidates keep annotations — means nothing).
 */
export function isHandoffTo(record: LeaseRecord, identity: string): boolean {
  const marker = record.handoff;
  return (
    marker !== undefined &&
    record.holderIdentity === identity &&
    marker.to === identity &&
    marker.leaseTransitions === record.leaseTransitions
  );
}

/**
 * Why a candidate that takes `record` (a record it read, not its own live term) begins a term:
 * `handoff` if it is a live handoff to `identity`, `release` if released (empty holder), else
 * `expired` (the holder's record expired by the candidate's observation, or was its own lost
 * term's).
 */
export function acquisitionReason(
  record: LeaseRecord,
  identity: string,
): Exclude<LeadershipChangeReason, 'created'> {
  if (isHandoffTo(record, identity)) return record.handoff!.preferred ? 'preferred' : 'handoff';
  return record.holderIdentity === '' ? 'release' : 'expired';
}

/** `record` without its handoff marker (the Lease annotation is removed when written). */
export function withoutHandoff(record: LeaseRecord): LeaseRecord {
  if (record.handoff === undefined) return record;
  const { handoff: _handoff, ...rest } = record;
  return rest;
}

/**
 * The record that hands `current` to `to` (see the file's description).
 * @param leaseTransitions - the handoff record's transitions: the leader's + 1
 * @param preferred - `to` was chosen by preference (see `LeaseHandoff.preferred`)
 */
export function handoffRecord(
  current: LeaseRecord,
  to: string,
  leaseDurationSeconds: number,
  leaseTransitions: number,
  now: Date,
  preferred = false,
): LeaseRecord {
  // A handoff fulfils (or overrides) a `spec.preferredHolder`: cleared, so the new holder is
  // not asked to hand over again; the offer it answers is done with.
  const { preferredHolder: _preferredHolder, handoffOffer: _offer, ...kept } = current;
  return {
    ...kept,
    holderIdentity: to,
    leaseDurationSeconds,
    acquireTime: now,
    renewTime: now,
    leaseTransitions,
    handoff: preferred ? { to, leaseTransitions, preferred } : { to, leaseTransitions },
  };
}

/** What {@link writeHandoff} needs of the elector. */
export interface HandoffWriter {
  /** The lock's description, for errors. */
  lock: string;
  get(signal: AbortSignal): Promise<VersionedLeaseRecord | undefined>;
  update(record: LeaseRecord, version: string, signal: AbortSignal): Promise<string>;
  /** Told of every record read or written. */
  observe(current: VersionedLeaseRecord): void;
  /** Wall-clock now, for acquireTime and renewTime. */
  now(): Date;
  /** leaseTransitions + 1, as for a new term. */
  nextTransitions(leaseTransitions: number): number;
  /** The record as the elector writes it (e.g. with its schedule ledger). */
  finish(record: LeaseRecord): LeaseRecord;
}

/** What to hand over: the ended term's holder and token, the target and the bound. */
export interface HandoffRequest {
  holder: string;
  leaseTransitions: number;
  to: string;
  leaseDurationSeconds: number;
  /** `to` was chosen by preference (see `LeaseHandoff.preferred`). */
  preferred?: boolean;
}

/**
 * Writes the handoff (see {@link handoffRecord}) over the record that still names
 * `request.holder` at `request.leaseTransitions` (the ended term's): reads, writes with the
 * version read (optimistic concurrency), re-reads after a conflict, at most
 * {@link MAX_HANDOFF_ATTEMPTS} times. Resolves the record written.
 * @throws LeadershipTransferError `lease-lost` if the record no longer names the holder at
 *   those transitions (or is gone); `write-failed` if a request failed, or conflicts persisted.
 */
export async function writeHandoff(
  writer: HandoffWriter,
  request: HandoffRequest,
  signal: AbortSignal,
): Promise<LeaseRecord> {
  const { holder, leaseTransitions, to, leaseDurationSeconds, preferred } = request;
  for (let attempt = 1; ; attempt++) {
    let current: VersionedLeaseRecord | undefined;
    try {
      current = await writer.get(signal);
    } catch (cause) {
      throw new LeadershipTransferError('write-failed', writer.lock, to, { cause });
    }
    if (current) writer.observe(current);
    if (
      !current ||
      current.record.holderIdentity !== holder ||
      current.record.leaseTransitions !== leaseTransitions
    ) {
      throw new LeadershipTransferError('lease-lost', writer.lock, to);
    }
    const next = writer.nextTransitions(current.record.leaseTransitions);
    const record = writer.finish(
      handoffRecord(current.record, to, leaseDurationSeconds, next, writer.now(), preferred),
    );
    try {
      const version = await writer.update(record, current.version, signal);
      writer.observe({ record, version });
      return record;
    } catch (cause) {
      if (!(cause instanceof LockConflictError) || attempt >= MAX_HANDOFF_ATTEMPTS) {
        throw new LeadershipTransferError('write-failed', writer.lock, to, { cause });
      }
    }
  }
}
