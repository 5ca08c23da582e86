/**
 * The coordinator of a sharded election: the one member holding the election's Lease (an
 * ordinary `LeaderElector` term) reads every member Lease and writes the assignment — the only
 * writer of it. It grants a shard only when nobody may still work on it: never owned, owner
 * acknowledged its revoke, owner released its Lease, owner's epoch over, or owner's Lease
 * expired by this coordinator's observation and then evicted by a compare-and-swap over the
 * very version it judged (so a renewal that raced the judgement wins). Framework-free.
 */

import type { LeaderTerm } from '../core/leader-term.js';
import type { Clock } from '../core/clock.js';
import type { ElectionLogger } from '../core/leader-elector.options.js';
import type { LeaseRecord } from '../locks/resource-lock.js';
import { recordFingerprint } from './member-lease.js';
import type { MemberObservation, MemberObservations } from './member-observations.js';
import {
  assignmentLeaseName,
  formatMemberState,
  memberLeaseName,
  parseMemberState,
} from './member-state.js';
import {
  emptyAssignment,
  formatShardAssignment,
  parseShardAssignment,
  type ShardAssignment,
  type ShardGrant,
  type ShardOwner,
} from './shard-assignment.js';
import { balanceShards } from './shard-balancer.js';
import type { ShardObserver } from './shard-observer.js';
import type { ShardLeaseStore } from './shard-lease-store.js';
import { shardingMessages } from './sharding.messages.js';

/** Options of a {@link ShardCoordinator}; times in ms. @internal */
export interface ShardCoordinatorOptions {
  election: string;
  shards: number;
  identity: string;
  store: ShardLeaseStore;
  clock: Clock;
  logger: ElectionLogger;
  leaseDurationMs: number;
  retryPeriodMs: number;
  /**
   * How long a live owner may take to acknowledge a revoke before it is evicted (its whole
   * epoch ends): drainTimeout + renewDeadline.
   */
  ackTimeoutMs: number;
  /** What this process has observed of the member Leases (shared across coordinator terms). */
  observations: MemberObservations;
  /** True when the observations are fed by a watch of the member Leases. */
  watching: boolean;
  /** Told of the grants this coordinator writes (metrics). */
  observer?: ShardObserver;
}

/** A live member: holds its Lease, not expired by observation. */
interface LiveMember {
  epoch: number;
  ack: number;
}

type OwnerStatus = 'live' | 'expired' | 'stopped' | 'unknown';

/**
 * One coordination run, for one coordinator term (a fresh instance per term), judging expiry
 * from what this process has observed of the member Leases (see `MemberObservations`). @internal
 */
export class ShardCoordinator {
  private readonly options: ShardCoordinatorOptions;
  private readonly observations: Map<string, MemberObservation>;
  private assignment: { value: ShardAssignment; version: string | undefined } | undefined;
  private unreadableReported = false;
  /** Per owner (`epoch/identity`): when this coordinator first saw it with a pending revoke. */
  private readonly revokePendingSinceMs = new Map<string, number>();
  private wake = new AbortController();
  /** Per shard: when this coordinator first found it grantable (monotonic ms). */
  private readonly freeSinceMs = new Map<number, number>();
  /** Per shard: when this coordinator wrote its revoke (monotonic ms). */
  private readonly revokedAtMs = new Map<number, number>();

  constructor(options: ShardCoordinatorOptions) {
    this.options = options;
    this.observations = options.observations.byName;
  }

  /** The assignment as last read or written by this coordinator. */
  get current(): ShardAssignment | undefined {
    return this.assignment?.value;
  }

  /**
   * Coordinates until `term` ends. With a watching store: a round whenever a member's state
   * changes (holder, epoch, acknowledgement) and at every due expiry, a fresh listing every
   * leaseDuration; without: a listing and a round every retryPeriod.
   */
  async run(term: LeaderTerm): Promise<void> {
    const { clock, retryPeriodMs, leaseDurationMs, logger, election } = this.options;
    logger.info(shardingMessages.coordinating(election, term.leaseTransitions));
    const { watching, observations } = this.options;
    const unsubscribe = observations.onStateChange(() => this.wake.abort());
    let listedMs = -Infinity;
    while (term.isLive()) {
      if (this.wake.signal.aborted) this.wake = new AbortController();
      const list = !watching || clock.nowMs() - listedMs >= leaseDurationMs;
      if (list) listedMs = clock.nowMs();
      const dueMs = await this.round(term, list);
      if (!term.isLive()) break;
      const periodMs = watching ? leaseDurationMs : retryPeriodMs;
      const delayMs = Math.min(periodMs, Math.max(0, dueMs - clock.nowMs()));
      await clock.sleep(delayMs, AbortSignal.any([term.signal, this.wake.signal]));
    }
    unsubscribe();
  }

  /**
   * One round: list the member Leases (when `list`), judge each owner, evict the expired, write
   * the assignment if it changes. Never throws.
   * @returns monotonic ms of the next expiry this coordinator waits for (Infinity: none)
   */
  async round(term: LeaderTerm, list = true): Promise<number> {
    const { store, election, logger, clock } = this.options;
    const startedMs = clock.nowMs();
    try {
      if (list) {
        const listing = await store.list(`${election}-m-`, term.signal);
        this.options.observations.observeListing(listing, clock.nowMs());
      }
      if (!this.assignment && !(await this.load(term)))
        return clock.nowMs() + this.options.retryPeriodMs;
      let plan = this.plan(startedMs);
      if (plan.evict.length > 0) {
        for (const [name, reason] of plan.evict) await this.evict(name, reason, term);
        plan = this.plan(startedMs);
      }
      if (plan.changed) await this.write(plan.shards, term);
      return plan.nextExpiryMs;
    } catch (error) {
      if (!term.signal.aborted)
        logger.warn(shardingMessages.coordinatorRoundFailed(election, error));
      return Infinity;
    }
  }

  // --- What the members' Leases say ----------------------------------------------------------

  /** True once the Lease `name` has not changed for its leaseDuration by our observation. */
  private expired(observation: MemberObservation, atMs: number): boolean {
    const seconds = observation.current?.record.leaseDurationSeconds;
    const durationMs = seconds && seconds > 0 ? seconds * 1000 : this.options.leaseDurationMs;
    return atMs - observation.observedMs > durationMs;
  }

  private expiryOf(observation: MemberObservation): number {
    const seconds = observation.current?.record.leaseDurationSeconds;
    const durationMs = seconds && seconds > 0 ? seconds * 1000 : this.options.leaseDurationMs;
    return observation.observedMs + durationMs + 1;
  }

  private liveMembers(atMs: number): Map<string, LiveMember> {
    const live = new Map<string, LiveMember>();
    for (const [name, observation] of this.observations) {
      const record = observation.current?.record;
      if (!record || record.holderIdentity === '') continue;
      if (memberLeaseName(this.options.election, record.holderIdentity) !== name) continue;
      if (this.expired(observation, atMs)) continue;
      live.set(record.holderIdentity, {
        epoch: record.leaseTransitions,
        ack: parseMemberState(record.shards).ack,
      });
    }
    return live;
  }

  private status(owner: ShardOwner, atMs: number): OwnerStatus {
    const name = memberLeaseName(this.options.election, owner.identity);
    let observation = this.observations.get(name);
    if (!observation) {
      // Never seen: judged from now on, as a Lease that vanished.
      observation = { current: undefined, fingerprint: 'missing', observedMs: atMs };
      this.observations.set(name, observation);
    }
    const record = observation.current?.record;
    const expired = this.expired(observation, atMs);
    if (!record) return expired ? 'stopped' : 'unknown';
    // A later epoch is written only after this one ended (by its member, who knows it).
    if (record.leaseTransitions !== owner.epoch) return 'stopped';
    if (observation.endedEpoch === owner.epoch) return 'stopped';
    if (record.holderIdentity === '') {
      if (parseMemberState(record.shards).released) return 'stopped';
      return expired ? 'stopped' : 'unknown';
    }
    if (record.holderIdentity !== owner.identity) return expired ? 'stopped' : 'unknown';
    return expired ? 'expired' : 'live';
  }

  // --- The plan --------------------------------------------------------------------------------

  private plan(atMs: number): {
    shards: ShardGrant[];
    changed: boolean;
    evict: [string, 'expired' | 'no-ack'][];
    nextExpiryMs: number;
  } {
    const { election, ackTimeoutMs } = this.options;
    const assignment = this.assignment!.value;
    const nextRevision = assignment.revision + 1;
    const live = this.liveMembers(atMs);
    const statuses = new Map<string, OwnerStatus>();
    const statusOf = (owner: ShardOwner): OwnerStatus => {
      const key = ownerKey(owner);
      let status = statuses.get(key);
      if (status === undefined) statuses.set(key, (status = this.status(owner, atMs)));
      return status;
    };
    const current = assignment.shards.map((grant) =>
      grant.owner && statusOf(grant.owner) === 'live' ? grant.owner.identity : undefined,
    );
    const revoking = new Set<number>();
    assignment.shards.forEach((grant, shard) => {
      if (grant.revokedAt !== undefined) revoking.add(shard);
    });
    const target = balanceShards(current, [...live.keys()], revoking);
    const evict = new Map<string, 'expired' | 'no-ack'>();
    const pendingOwners = new Set<string>();
    let changed = false;
    const shards = assignment.shards.map((grant, shard): ShardGrant => {
      const to = target[shard];
      const grantOn = (): ShardGrant => {
        // Free from now on, by this coordinator's observation (for the unowned-time metric).
        if (!this.freeSinceMs.has(shard)) this.freeSinceMs.set(shard, atMs);
        const member = to === undefined ? undefined : live.get(to);
        if (member) return { owner: { identity: to!, epoch: member.epoch }, token: nextRevision };
        return grant.owner ? { owner: undefined, token: grant.token } : grant;
      };
      let next = grant;
      if (!grant.owner) next = grantOn();
      else {
        const status = statusOf(grant.owner);
        if (status === 'stopped') next = grantOn();
        else if (status === 'expired')
          evict.set(memberLeaseName(election, grant.owner.identity), 'expired');
        else if (status === 'live') {
          const ack = live.get(grant.owner.identity)!.ack;
          if (grant.revokedAt === undefined) {
            if (to !== grant.owner.identity) next = { ...grant, revokedAt: nextRevision };
          } else if (ack >= grant.revokedAt) {
            next = grantOn();
          } else {
            pendingOwners.add(ownerKey(grant.owner));
            const since = this.revokePendingSinceMs.get(ownerKey(grant.owner)) ?? atMs;
            this.revokePendingSinceMs.set(ownerKey(grant.owner), since);
            if (atMs - since > ackTimeoutMs) {
              evict.set(memberLeaseName(election, grant.owner.identity), 'no-ack');
            }
          }
        }
      }
      if (next !== grant) changed = true;
      return next;
    });
    for (const key of this.revokePendingSinceMs.keys()) {
      if (!pendingOwners.has(key)) this.revokePendingSinceMs.delete(key);
    }
    let nextExpiryMs = Infinity;
    for (const observation of this.observations.values()) {
      if (observation.current?.record.holderIdentity) {
        nextExpiryMs = Math.min(nextExpiryMs, this.expiryOf(observation));
      }
    }
    return { shards, changed, evict: [...evict], nextExpiryMs };
  }

  // --- Writes ----------------------------------------------------------------------------------

  /**
   * Clears the holder of member Lease `name` over the version judged. After `expired` the epoch
   * is over at once (the member's own deadline passed before our judgement, and the swap proves
   * it did not renew since); after `no-ack` it is over once the cleared Lease is unchanged for
   * its leaseDuration, or the member starts a new epoch.
   */
  private async evict(name: string, reason: 'expired' | 'no-ack', term: LeaderTerm): Promise<void> {
    const { store, clock, logger, election } = this.options;
    const observation = this.observations.get(name);
    const current = observation?.current;
    if (!observation || !current || current.record.holderIdentity === '' || !term.isLive()) return;
    const evicted: LeaseRecord = {
      ...current.record,
      holderIdentity: '',
      shards: formatMemberState({
        ack: parseMemberState(current.record.shards).ack,
        evicted: true,
      }),
    };
    try {
      const version = await store.lease(name).update(evicted, current.version, term.signal);
      logger.warn(
        shardingMessages.memberEvicted(
          election,
          current.record.holderIdentity,
          current.record.leaseTransitions,
          reason,
        ),
      );
      this.observations.set(name, {
        current: { record: evicted, version },
        fingerprint: recordFingerprint(evicted),
        observedMs: clock.nowMs(),
        ...(reason === 'expired' ? { endedEpoch: current.record.leaseTransitions } : {}),
      });
    } catch (error) {
      // A conflict: the member renewed after all (or was evicted already); judged again next round.
      logger.debug(shardingMessages.evictionFailed(election, name, error));
    }
  }

  /** Tells the observer of the grants and revokes `next` wrote. */
  private report(previous: ShardAssignment, next: ShardAssignment): void {
    const { observer, election, clock } = this.options;
    const nowMs = clock.nowMs();
    next.shards.forEach((grant, shard) => {
      const before = previous.shards[shard]!;
      if (grant.revokedAt === next.revision && before.revokedAt === undefined) {
        this.revokedAtMs.set(shard, nowMs);
      }
      if (grant.owner && grant.token === next.revision) {
        const freeSince = this.freeSinceMs.get(shard);
        observer?.shardGranted?.({
          election,
          shard,
          owner: grant.owner.identity,
          from: before.owner?.identity,
          token: grant.token,
          unownedMs: freeSince === undefined ? undefined : nowMs - freeSince,
        });
        const revokedAt = this.revokedAtMs.get(shard);
        if (revokedAt !== undefined) {
          observer?.shardHandedOff?.({ election, shard, handoffMs: nowMs - revokedAt });
        }
        this.freeSinceMs.delete(shard);
        this.revokedAtMs.delete(shard);
      }
    });
  }

  private async load(term: LeaderTerm): Promise<boolean> {
    const { store, election, shards, logger } = this.options;
    const current = await store.lease(assignmentLeaseName(election)).get(term.signal);
    if (!current) {
      this.assignment = { value: emptyAssignment(shards), version: undefined };
      return true;
    }
    const value = parseShardAssignment(current.record.shards, shards);
    if (!value) {
      if (!this.unreadableReported)
        logger.error(shardingMessages.assignmentUnreadable(election, shards));
      this.unreadableReported = true;
      return false;
    }
    this.assignment = { value, version: current.version };
    return true;
  }

  private async write(shards: ShardGrant[], term: LeaderTerm): Promise<void> {
    const { store, election, identity, clock, leaseDurationMs, logger } = this.options;
    const previous = this.assignment!;
    const next: ShardAssignment = {
      revision: previous.value.revision + 1,
      coordinator: identity,
      shards,
    };
    // The coordinator's term is checked at call time: a coordinator paused past its renew
    // deadline writes nothing (and the swap refuses anything written since it read).
    if (!term.isLive()) return;
    const now = clock.wallNow();
    const record: LeaseRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: leaseDurationMs / 1000,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: term.leaseTransitions,
      shards: formatShardAssignment(next),
    };
    const lock = store.lease(assignmentLeaseName(election));
    try {
      const version =
        previous.version === undefined
          ? await lock.create(record, term.signal)
          : await lock.update(record, previous.version, term.signal);
      this.assignment = { value: next, version };
      this.report(previous.value, next);
      logger.debug(shardingMessages.assignmentWritten(election, next.revision));
    } catch (error) {
      // Another writer (a stale coordinator) or a failure: read again next round.
      this.assignment = undefined;
      if (!term.signal.aborted)
        logger.warn(shardingMessages.assignmentWriteFailed(election, error));
    }
  }
}

function ownerKey(owner: ShardOwner): string {
  return `${owner.epoch}/${owner.identity}`;
}
