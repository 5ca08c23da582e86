import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { currentShard, InjectElection, LeaderOnly, ShardedElectionService } from 'nest-leader';
import { RECONCILE_INTERVAL_MS, SHARDED_ELECTION } from '../demo.constants.js';
import { EventLog } from '../event-log.service.js';

/**
 * The order reconciler, sharded: the election `orders` spreads its 16 shards over every replica,
 * and each tick runs once per shard this replica owns, inside that shard's term
 * (`currentShard()`: shard, fencing token, member epoch). Each run writes a `shard-work` line;
 * each ownership change a `shard-ownership` line.
 */
@Injectable()
export class ShardReconciler implements OnApplicationBootstrap {
  constructor(
    private readonly events: EventLog,
    @InjectElection(SHARDED_ELECTION) private readonly orders: ShardedElectionService,
  ) {}

  @Interval('reconcile-orders', RECONCILE_INTERVAL_MS)
  @LeaderOnly(SHARDED_ELECTION)
  reconcile(): void {
    this.events.shardWork(SHARDED_ELECTION, currentShard(SHARDED_ELECTION)!);
  }

  onApplicationBootstrap(): void {
    this.orders.onOwnershipChange((event) => this.events.shardOwnership(SHARDED_ELECTION, event));
  }
}
