import {
  type LeaseRecord,
  type ListedLease,
  memberLeaseName,
  ShardedElection,
  type ShardedElectionOptions,
  type ShardLeaseStore,
  type ShardTerm,
  type VersionedLeaseRecord,
  type LockWatch,
  type LockWatchListener,
  type WatchableLock,
} from 'nest-leader/core';
import { ManualClock, MemoryShardLeaseStore, RecordingLogger } from 'nest-leader/testing';

export const ELECTION = 'orders';

/** Rejects like a request that cannot reach the API server. */
function unreachable(): Promise<never> {
  return Promise.resolve().then(() => {
    throw new Error('connect ECONNREFUSED (test partition)');
  });
}

/**
 * One member's connection to the shared Leases: cut it (`partitioned`: every request fails and
 * no watch event arrives) or blind it to some Leases only (`blind`), as a network would.
 */
export class MemberConnection implements ShardLeaseStore {
  readonly description = "Leases in memory (one member's connection)";
  partitioned = false;
  readonly blind = new Set<string>();
  private readonly locks = new Map<string, ConnectionLock>();

  constructor(readonly shared: MemoryShardLeaseStore) {}

  cut(name: string): boolean {
    return this.partitioned || this.blind.has(name);
  }

  lease(name: string): ConnectionLock {
    let lock = this.locks.get(name);
    if (!lock) this.locks.set(name, (lock = new ConnectionLock(this, name)));
    return lock;
  }

  list(prefix: string, signal: AbortSignal): Promise<ListedLease[]> {
    if (this.partitioned) return unreachable();
    return this.shared.list(prefix, signal);
  }

  watch(
    prefix: string,
    listener: (name: string, current: VersionedLeaseRecord | undefined) => void,
    signal: AbortSignal,
  ): void {
    this.shared.watch(
      prefix,
      (name, current) => {
        if (!this.cut(name)) listener(name, current);
      },
      signal,
    );
  }
}

class ConnectionLock implements WatchableLock {
  readonly storesCandidates = true;
  readonly description: string;

  constructor(
    private readonly connection: MemberConnection,
    private readonly name: string,
  ) {
    this.description = `Lease ${name}`;
  }

  private get inner() {
    return this.connection.shared.lease(this.name);
  }

  get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    return this.connection.cut(this.name) ? unreachable() : this.inner.get(signal);
  }

  create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    return this.connection.cut(this.name) ? unreachable() : this.inner.create(record, signal);
  }

  update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    return this.connection.cut(this.name)
      ? unreachable()
      : this.inner.update(record, version, signal);
  }

  watch(listener: LockWatchListener, signal: AbortSignal): LockWatch {
    const cut = () => this.connection.cut(this.name);
    return this.inner.watch(
      {
        onRecord: (current) => (cut() ? undefined : listener.onRecord(current)),
        onConnected: () => listener.onConnected(),
        onDisconnected: (error) => listener.onDisconnected(error),
        onUnavailable: (error) => listener.onUnavailable(error),
      },
      signal,
    );
  }
}

/** A member of the simulated election. */
export interface SimMember {
  id: string;
  election: ShardedElection;
  connection: MemberConnection;
  logger: RecordingLogger;
  /** Shard terms this member started, in order. */
  started: ShardTerm[];
  /** Shard terms this member stopped, in order. */
  stopped: ShardTerm[];
}

/**
 * Several members of one sharded election on one manual clock and one in-memory API server,
 * with the safety checks made at the moment any member starts a shard: no other member (by its
 * own call-time view) still holds a live term of it, and its token is above every earlier one.
 */
export class ShardWorld {
  readonly clock = new ManualClock();
  readonly store = new MemoryShardLeaseStore();
  readonly members = new Map<string, SimMember>();
  /** Safety violations seen: overlapping owners, tokens not increasing. */
  readonly violations: string[] = [];
  /** Per shard: the highest token started so far. */
  readonly highestToken = new Map<number, number>();
  /** Per shard: when (clock ms) it was last left without a live owner, while unowned. */
  readonly unownedSinceMs = new Map<number, number>();
  /** Per moved shard: how long (ms) it was without an owner. */
  readonly gapsMs: number[] = [];
  /** Every start: [clock ms, member, shard, token]. */
  readonly starts: [number, string, number, number][] = [];

  constructor(readonly shards: number) {}

  add(id: string, overrides: Partial<ShardedElectionOptions> = {}): SimMember {
    const connection = new MemberConnection(this.store);
    const logger = new RecordingLogger();
    const member: SimMember = {
      id,
      connection,
      logger,
      started: [],
      stopped: [],
      election: undefined!,
    };
    member.election = new ShardedElection({
      name: ELECTION,
      shards: this.shards,
      store: connection,
      identity: id,
      clock: this.clock,
      logger,
      random: () => 0,
      callbacks: {
        onShardStarted: (term) => this.onStarted(member, term),
        onShardStopped: (term) => {
          member.stopped.push(term);
          if (!this.ownedElsewhere(term.shard))
            this.unownedSinceMs.set(term.shard, this.clock.nowMs());
        },
      },
      ...overrides,
    });
    this.members.set(id, member);
    member.election.start();
    return member;
  }

  private onStarted(member: SimMember, term: ShardTerm): void {
    member.started.push(term);
    this.starts.push([this.clock.nowMs(), member.id, term.shard, term.token]);
    for (const other of this.members.values()) {
      if (other !== member && other.election.shardTerm(term.shard)) {
        this.violations.push(
          `shard ${term.shard}: ${member.id} started token ${term.token} while ${other.id} owns it`,
        );
      }
    }
    const highest = this.highestToken.get(term.shard) ?? -1;
    if (term.token <= highest) {
      this.violations.push(`shard ${term.shard}: token ${term.token} after ${highest}`);
    }
    this.highestToken.set(term.shard, term.token);
    const since = this.unownedSinceMs.get(term.shard);
    if (since !== undefined) this.gapsMs.push(this.clock.nowMs() - since);
    this.unownedSinceMs.delete(term.shard);
  }

  private ownedElsewhere(shard: number): boolean {
    return [...this.members.values()].some((m) => m.election.shardTerm(shard) !== undefined);
  }

  /** Advances the clock in steps of `stepMs`, checking at every step that no shard has two owners. */
  async run(ms: number, stepMs = 100): Promise<void> {
    for (let elapsed = 0; elapsed < ms; elapsed += stepMs) {
      await this.clock.advance(Math.min(stepMs, ms - elapsed));
      this.checkOverlaps();
    }
  }

  /** No shard live on two members by their own (call-time) views. */
  checkOverlaps(): void {
    for (let shard = 0; shard < this.shards; shard++) {
      const owners = [...this.members.values()].filter((m) => m.election.shardTerm(shard));
      if (owners.length > 1) {
        this.violations.push(
          `shard ${shard} owned by ${owners.map((m) => m.id).join(', ')} at ${this.clock.nowMs()} ms`,
        );
      }
    }
  }

  /** Shards owned per member now (by each member's view), for the given members. */
  ownership(ids: string[] = [...this.members.keys()]): Map<string, number[]> {
    return new Map(ids.map((id) => [id, this.members.get(id)!.election.ownedShards()]));
  }

  /** Shards nobody owns now. */
  unowned(): number[] {
    const owned = new Set([...this.members.values()].flatMap((m) => m.election.ownedShards()));
    return Array.from({ length: this.shards }, (_, s) => s).filter((s) => !owned.has(s));
  }

  /** The wall time of the last renewal of `id`'s member Lease, as monotonic clock ms. */
  lastRenewalMs(id: string): number {
    const record = this.store.lease(memberLeaseName(ELECTION, id)).read()!.record;
    return this.clock.nowMs() - (this.clock.wallNow().getTime() - record.renewTime!.getTime());
  }

  async stopAll(): Promise<void> {
    for (const member of this.members.values()) member.connection.partitioned = false;
    await Promise.all([...this.members.values()].map((m) => m.election.stop()));
  }
}

/** Every live member owns ⌊N/R⌋ or ⌈N/R⌉ shards, and every shard has an owner. */
export function balanceProblems(world: ShardWorld, ids: string[]): string[] {
  const problems: string[] = [];
  const floor = Math.floor(world.shards / ids.length);
  for (const [id, shards] of world.ownership(ids)) {
    if (shards.length !== floor && shards.length !== floor + 1) {
      problems.push(`${id} owns ${shards.length}, expected ${floor} or ${floor + 1}`);
    }
  }
  const unowned = world.unowned();
  if (unowned.length > 0) problems.push(`unowned: ${unowned.join(',')}`);
  return problems;
}
