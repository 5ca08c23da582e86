/**
 * What this process has observed of the member Leases of its sharded election, and when (its
 * monotonic clock): the coordinator's ground for judging expiry. Kept by every member from the
 * start (fed by the store's watch when it has one), so a member that becomes coordinator judges
 * from everything it has seen, not from the moment it took over: a crashed member's shards move
 * about leaseDuration after its last renewal even when the coordinator crashed with it.
 * Framework-free.
 */

import type { LeaseRecord, VersionedLeaseRecord } from '../locks/resource-lock.js';
import { recordFingerprint } from './member-lease.js';

/** What is known of one member Lease. @internal */
export interface MemberObservation {
  /** The Lease as last read; `undefined` while it is missing. */
  current: VersionedLeaseRecord | undefined;
  fingerprint: string;
  /** Monotonic ms this process first saw the Lease in this form. */
  observedMs: number;
  /** An epoch a coordinator of this process evicted after judging it expired: over for certain. */
  endedEpoch?: number;
}

/** @internal */
export class MemberObservations {
  readonly byName = new Map<string, MemberObservation>();
  private readonly listeners = new Set<() => void>();

  /** Calls `listener` when a member's state (holder, epoch, acknowledgement) changes. */
  onStateChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Takes in a full listing read at `nowMs` (a Lease not in it is missing). */
  observeListing(
    listing: readonly { name: string; current: VersionedLeaseRecord }[],
    nowMs: number,
  ): void {
    const seen = new Set<string>();
    for (const { name, current } of listing) {
      seen.add(name);
      this.observe(name, current, nowMs);
    }
    for (const [name, known] of this.byName) {
      if (!seen.has(name) && known.current !== undefined) this.observe(name, undefined, nowMs);
    }
  }

  /**
   * Takes in one member Lease as read or watched at `nowMs`; tells the listeners when the
   * member's state changed, not only its renewTime.
   */
  observe(name: string, current: VersionedLeaseRecord | undefined, nowMs: number): void {
    const known = this.byName.get(name);
    // An older event than what we hold (Lease and memory versions are ordered numbers).
    if (known?.current && current && Number(current.version) < Number(known.current.version))
      return;
    const fingerprint = current ? recordFingerprint(current.record) : 'missing';
    const before = known?.current ? stateOf(known.current.record) : 'missing';
    if (known && known.fingerprint === fingerprint) known.current = current;
    else this.byName.set(name, { ...known, current, fingerprint, observedMs: nowMs });
    if (before !== (current ? stateOf(current.record) : 'missing')) {
      for (const listener of this.listeners) listener();
    }
  }

  /** Replaces what is known of `name` (after this process wrote it). */
  set(name: string, observation: MemberObservation): void {
    this.byName.set(name, observation);
  }
}

/** What a round acts on in a member record: holder, epoch and the member's state text. */
function stateOf(record: LeaseRecord): string {
  return JSON.stringify([record.holderIdentity, record.leaseTransitions, record.shards]);
}
