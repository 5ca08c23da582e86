/**
 * A sharded election: N shards, each owned by at most one live member at a time, spread over
 * the members within ±1 and moved as little as possible. Composes an ordinary `LeaderElector`
 * (the coordinator), a member Lease per member (the heartbeat and fence of its shards), the
 * assignment (written by the coordinator only) and the shard terms. The design — what is stored
 * where, who writes what when, why no shard has two owners — is in the package's docs
 * ("Sharded leadership"). Framework-free.
 */

import { sleepWith } from '../core/clock.js';
import { LeaderElector } from '../core/election/leader-elector.js';
import type { LeaderTerm } from '../core/leader-term.js';
import type { ShardTermEndReason } from '../errors.interfaces.js';
import { isWatchableLock } from '../locks/watchable-lock.js';
import { AssignmentFollower } from './assignment-follower.js';
import { MemberLease } from './member-lease.js';
import { MemberObservations } from './member-observations.js';
import { assignmentLeaseName, memberLeaseName } from './member-state.js';
import { sameOwner, type ShardAssignment } from './shard-assignment.js';
import { ShardCoordinator } from './shard-coordinator.js';
import { shardOfKey } from './shard-hash.js';
import { type ShardTerm, ShardTermLifetime } from './shard-term.js';
import {
  resolveShardedElectionOptions,
  type ResolvedShardedElectionOptions,
  type ShardedElectionOptions,
} from './sharded-election.options.js';
import { shardingMessages } from './sharding.messages.js';

/** A change of this member's shards. */
export type ShardOwnershipEvent =
  | { type: 'started'; term: ShardTerm }
  | { type: 'stopped'; term: ShardTerm; reason: ShardTermEndReason };

/**
 * One member of a sharded election.
 *
 * @example
 * const election = new ShardedElection({ name: 'orders', shards: 64, store, identity,
 *   callbacks: { onShardStarted: (term) => reconcile(term), onShardStopped: () => drained } });
 * election.start();
 * if (election.owns(order.id)) { … }
 * await election.stop();
 */
export class ShardedElection {
  /** The election's name (its coordinator Lease). */
  readonly name: string;
  /** This member's identity. */
  readonly identity: string;
  /** Number of shards. */
  readonly shards: number;
  private readonly config: ResolvedShardedElectionOptions;
  private readonly coordinatorElection: LeaderElector;
  private readonly member: MemberLease;
  private readonly follower: AssignmentFollower;
  private readonly observations = new MemberObservations();
  private readonly running = new AbortController();
  private readonly terms = new Map<number, ShardTermLifetime>();
  /** Highest token this member has held per shard: a lower or equal one is never started. */
  private readonly highestToken: number[];
  private readonly draining = new Set<Promise<void>>();
  private readonly listeners = new Set<(event: ShardOwnershipEvent) => void>();
  private latest: ShardAssignment | undefined;
  private applying: Promise<void> = Promise.resolve();
  private coordination: Promise<void> | undefined;
  private coordinator: ShardCoordinator | undefined;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  private stopping: Promise<void> | undefined;

  /**
   * Validates the options once; touches no Lease.
   * @throws InvalidLeaderElectionOptionError naming the option and the rule it breaks.
   */
  constructor(options: ShardedElectionOptions) {
    const config = resolveShardedElectionOptions(options);
    this.config = config;
    ({ name: this.name, identity: this.identity, shards: this.shards } = config);
    this.highestToken = Array.from({ length: config.shards }, () => -1);
    const { store, clock, logger, random, timings } = config;
    const electionLock = store.lease(config.name);
    this.coordinatorElection = new LeaderElector({
      lock: electionLock,
      identity: config.identity,
      ...timings,
      name: config.name,
      clock,
      logger,
      random,
      watchLease: isWatchableLock(electionLock),
      callbacks: {
        onStartedLeading: (term) => this.coordinate(term),
        onStoppedLeading: () => this.coordination,
      },
    });
    this.member = new MemberLease({
      lock: store.lease(memberLeaseName(config.name, config.identity)),
      identity: config.identity,
      clock,
      logger,
      leaseDurationMs: config.leaseDurationMs,
      renewDeadlineMs: config.renewDeadlineMs,
      retryPeriodMs: config.retryPeriodMs,
      requestTimeoutMs: config.requestTimeoutMs,
      onEpochStarted: () => this.enqueueApply(),
      onEpochEnded: () => this.endAll('member-epoch-ended'),
    });
    this.follower = new AssignmentFollower({
      election: config.name,
      shards: config.shards,
      lock: store.lease(assignmentLeaseName(config.name)),
      clock,
      logger,
      retryPeriodMs: config.retryPeriodMs,
      leaseDurationMs: config.leaseDurationMs,
      onAssignment: (assignment) => {
        this.latest = assignment;
        this.enqueueApply();
      },
    });
  }

  /** Maps a key to its shard: FNV-1a 32 of its UTF-8 bytes modulo `shards` (see `shardOfKey`). */
  shardOf(key: string): number {
    return shardOfKey(key, this.shards);
  }

  /** The live term of `shard` on this member, or `undefined` (checked at call time). */
  shardTerm(shard: number): ShardTerm | undefined {
    const term = this.terms.get(shard)?.term;
    return term?.isLive() ? term : undefined;
  }

  /** True while this member owns the shard of `key` (a live shard term, checked now). */
  owns(key: string): boolean {
    return this.shardTerm(this.shardOf(key)) !== undefined;
  }

  /** The shards this member owns now, ascending (live terms only, checked now). */
  ownedShards(): number[] {
    return [...this.terms.keys()]
      .filter((s) => this.shardTerm(s) !== undefined)
      .sort((a, b) => a - b);
  }

  /** True while this member is the coordinator (holds the election's Lease). */
  isCoordinator(): boolean {
    return this.coordinatorElection.isLeader();
  }

  /** This member's epoch while its member Lease is live. */
  get memberEpoch(): number | undefined {
    return this.member.term?.leaseTransitions;
  }

  /** The assignment as this member last read it (for diagnostics and status pages). */
  get assignment(): ShardAssignment | undefined {
    return this.latest;
  }

  /**
   * Subscribes to this member's shard changes (after the callbacks).
   * @returns a function that unsubscribes
   */
  subscribe(listener: (event: ShardOwnershipEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Joins: starts the member Lease, the assignment view and the coordinator candidacy. */
  start(): void {
    if (this.state !== 'new') return;
    this.state = 'running';
    const { store, name, clock } = this.config;
    store.watch?.(
      `${name}-m-`,
      (lease, current) => this.observations.observe(lease, current, clock.nowMs()),
      this.running.signal,
    );
    this.member.start();
    this.follower.start();
    this.coordinatorElection.start();
  }

  /**
   * Leaves gracefully: stops every shard and awaits their drains (bounded by drainTimeout),
   * releases the member Lease (the coordinator grants its shards at once), then stops the
   * coordinator candidacy (releasing the election's Lease if held). Never rejects; idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    this.state = 'stopping';
    await this.follower.stop();
    this.endAll('stopped');
    await this.drained();
    await this.member.stop();
    await this.coordinatorElection.stop();
    this.running.abort();
    this.state = 'stopped';
  }

  // --- Coordinator ---------------------------------------------------------------------------

  private coordinate(term: LeaderTerm): void {
    const config = this.config;
    const coordinator = new ShardCoordinator({
      election: config.name,
      shards: config.shards,
      identity: config.identity,
      store: config.store,
      clock: config.clock,
      logger: config.logger,
      leaseDurationMs: config.leaseDurationMs,
      retryPeriodMs: config.retryPeriodMs,
      ackTimeoutMs: config.drainTimeoutMs + config.renewDeadlineMs,
      observations: this.observations,
      watching: typeof config.store.watch === 'function',
      observer: config.observer,
    });
    this.coordinator = coordinator;
    this.coordination = coordinator.run(term).finally(() => {
      if (this.coordinator === coordinator) this.coordinator = undefined;
    });
  }

  // --- Member: apply each assignment in order ------------------------------------------------

  private enqueueApply(): void {
    this.applying = this.applying
      .then(() => this.apply())
      .catch((error: unknown) => {
        this.config.logger.error(shardingMessages.callbackFailed(this.name, 'apply', error));
      });
  }

  /**
   * Makes this member's shard terms what the latest assignment grants to its live epoch:
   * ends the others, starts the new ones, and — once the ended ones drained or drainTimeout
   * passed — acknowledges the revision (at once when something was revoked, else with the next
   * renewal).
   */
  private async apply(): Promise<void> {
    if (this.state !== 'running') return;
    const epoch = this.member.term;
    const assignment = this.latest;
    if (!epoch || !assignment) {
      // No epoch, or no assignment to prove a grant: nothing may run.
      this.endAll(epoch ? 'revoked' : 'member-epoch-ended');
      return;
    }
    const mine = { identity: this.identity, epoch: epoch.leaseTransitions };
    const stopped: Promise<void>[] = [];
    for (const [shard, lifetime] of this.terms) {
      const grant = assignment.shards[shard];
      const kept =
        grant !== undefined &&
        sameOwner(grant.owner, mine) &&
        grant.revokedAt === undefined &&
        grant.token === lifetime.term.token;
      if (!kept) stopped.push(this.endShard(shard, 'revoked'));
    }
    assignment.shards.forEach((grant, shard) => {
      if (!sameOwner(grant.owner, mine) || grant.revokedAt !== undefined) return;
      if (this.terms.has(shard) || grant.token <= this.highestToken[shard]!) return;
      this.startShard(shard, grant.token, epoch);
    });
    if (stopped.length > 0) await this.drainWithin(stopped);
    if (this.member.term?.leaseTransitions === mine.epoch) {
      this.member.acknowledge(assignment.revision, stopped.length > 0);
    }
  }

  /**
   * Starts and announces the shard's term, unless the member epoch ended since `apply` checked
   * it: a pause in between (SIGSTOP, a long GC, slow listeners of the shards this apply stopped)
   * must not announce a term another member may already hold (the chaos run of seed 1151739778
   * logged one 882 ms into its successor's). Checked per shard, just before announcing.
   */
  private startShard(shard: number, token: number, epoch: LeaderTerm): void {
    if (!epoch.isLive()) return;
    const lifetime = new ShardTermLifetime(shard, token, epoch);
    this.terms.set(shard, lifetime);
    this.highestToken[shard] = token;
    this.config.logger.debug(shardingMessages.shardStarted(this.name, shard, token));
    this.config.observer?.shardStarted?.({
      election: this.name,
      shard,
      token,
      owned: this.terms.size,
    });
    try {
      this.config.callbacks.onShardStarted?.(lifetime.term);
    } catch (error) {
      this.config.logger.error(shardingMessages.callbackFailed(this.name, 'onShardStarted', error));
    }
    this.emit({ type: 'started', term: lifetime.term });
  }

  /** Ends the shard's term (if live) and returns its drain. */
  private endShard(shard: number, reason: ShardTermEndReason): Promise<void> {
    const lifetime = this.terms.get(shard);
    if (!lifetime) return Promise.resolve();
    this.terms.delete(shard);
    lifetime.end(reason);
    const ended = lifetime.endReason ?? reason;
    lifetime.ending ??= this.drainShard(lifetime, ended);
    return lifetime.ending;
  }

  private async drainShard(lifetime: ShardTermLifetime, reason: ShardTermEndReason): Promise<void> {
    const { term } = lifetime;
    this.config.logger.debug(
      shardingMessages.shardStopped(this.name, term.shard, term.token, reason),
    );
    this.emit({ type: 'stopped', term, reason });
    const { observer, clock } = this.config;
    observer?.shardStopped?.({
      election: this.name,
      shard: term.shard,
      token: term.token,
      reason,
      owned: this.terms.size,
    });
    const stoppedMs = clock.nowMs();
    const drain = (async () => {
      try {
        await this.config.callbacks.onShardStopped?.(term, reason);
      } catch (error) {
        this.config.logger.error(
          shardingMessages.callbackFailed(this.name, 'onShardStopped', error),
        );
      }
    })();
    this.draining.add(drain);
    await drain;
    this.draining.delete(drain);
    observer?.shardDrained?.({
      election: this.name,
      shard: term.shard,
      drainMs: clock.nowMs() - stoppedMs,
    });
  }

  private endAll(reason: ShardTermEndReason): void {
    for (const shard of [...this.terms.keys()]) void this.endShard(shard, reason);
  }

  private async drainWithin(drains: Promise<void>[]): Promise<void> {
    const { clock, drainTimeoutMs, logger } = this.config;
    const timeout = new AbortController();
    let finished = false;
    await Promise.race([
      Promise.all(drains).then(() => (finished = true)),
      sleepWith(clock, drainTimeoutMs, timeout.signal),
    ]);
    timeout.abort();
    if (!finished)
      logger.warn(shardingMessages.drainTimedOut(this.name, drains.length, drainTimeoutMs));
  }

  /** Every draining shard, bounded by drainTimeout. */
  private drained(): Promise<void> {
    return this.drainWithin([...this.draining]);
  }

  private emit(event: ShardOwnershipEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.config.logger.error(shardingMessages.callbackFailed(this.name, 'listener', error));
      }
    }
  }
}
