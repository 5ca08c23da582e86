import {
  type BeforeApplicationShutdown,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Flushable } from '../../observability/composite.observer.js';
import type { ShardAssignment } from '../../sharding/shard-assignment.js';
import type { ShardOwnershipEvent, ShardedElection } from '../../sharding/sharded-election.js';
import type { ShardTerm } from '../../sharding/shard-term.js';
import { nestMessages } from '../nest.messages.js';
import type { ShardedLeaderOnlyGate } from './sharded-leader-only.gate.js';

/**
 * One sharded election of the application (inject it with `@InjectElection(name)`): which
 * shards this replica owns, which shard a key belongs to, and its ownership changes. Starts at
 * application bootstrap; stops gracefully (drains its shards, releases its member Lease) before
 * shutdown.
 */
export class ShardedElectionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ShardedElection');

  /** @internal */
  constructor(
    /** The election's name (`@LeaderOnly(name)`). */
    readonly name: string,
    private readonly election: ShardedElection,
    /** @internal */
    readonly gate: ShardedLeaderOnlyGate,
    private readonly startMessage: string,
    /** The election's observers (metrics, Events): their writes are flushed after it stops. */
    private readonly observer?: Flushable,
  ) {}

  /** Number of shards. */
  get shards(): number {
    return this.election.shards;
  }

  /** This replica's identity. */
  get identity(): string {
    return this.election.identity;
  }

  /** The shard of `key`: FNV-1a 32 of its UTF-8 bytes modulo `shards` (see `shardOfKey`). */
  shardOf(key: string): number {
    return this.election.shardOf(key);
  }

  /** True while this replica owns the shard of `key` (checked now, against the renew deadline). */
  owns(key: string): boolean {
    return this.election.owns(key);
  }

  /** The shards this replica owns now, ascending. */
  ownedShards(): number[] {
    return this.election.ownedShards();
  }

  /** The live term of `shard` on this replica (its token and signal), or `undefined`. */
  shardTerm(shard: number): ShardTerm | undefined {
    return this.election.shardTerm(shard);
  }

  /** True while this replica coordinates the election (writes the assignment). */
  isCoordinator(): boolean {
    return this.election.isCoordinator();
  }

  /**
   * Shards per member identity, as this replica last read the assignment (a status board's
   * view: owners being moved included; not a proof of ownership — `owns()` is).
   */
  shardsPerMember(): Map<string, number> {
    const counts = new Map<string, number>();
    const assignment: ShardAssignment | undefined = this.election.assignment;
    for (const grant of assignment?.shards ?? []) {
      if (grant.owner)
        counts.set(grant.owner.identity, (counts.get(grant.owner.identity) ?? 0) + 1);
    }
    return counts;
  }

  /**
   * Calls `listener` at every change of this replica's shards (`started`, `stopped` with the
   * reason).
   * @returns a function that unsubscribes
   */
  onOwnershipChange(listener: (event: ShardOwnershipEvent) => void): () => void {
    return this.election.subscribe(listener);
  }

  /** @internal Nest lifecycle: joins the election. */
  onApplicationBootstrap(): void {
    this.logger.log(this.startMessage);
    this.election.start();
  }

  /** @internal Nest lifecycle: leaves gracefully (drains, releases). */
  async beforeApplicationShutdown(): Promise<void> {
    this.gate.close();
    await this.election.stop();
    await this.observer?.flush?.();
    this.logger.log(nestMessages.shardedElectionStopped(this.name));
  }
}
