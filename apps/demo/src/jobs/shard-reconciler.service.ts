import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import {
  currentTerm,
  LeaderOnly,
  type LeaderTerm,
  OnLeadershipAcquired,
  OnLeadershipLost,
} from 'nest-leader';
import { RECONCILE_INTERVAL_MS, SHARD_ELECTION } from '../demo.constants.js';
import { EventLog } from '../event-log.service.js';

/**
 * The reconciler of one shard, led on its own Lease (the demo's second election): it may run
 * on another replica than the default election's scheduler, and fails over on its own.
 */
@Injectable()
export class ShardReconciler {
  constructor(private readonly events: EventLog) {}

  @Interval('reconcile-shard', RECONCILE_INTERVAL_MS)
  @LeaderOnly(SHARD_ELECTION)
  reconcile(): void {
    this.events.shardWork(SHARD_ELECTION, currentTerm(SHARD_ELECTION)!);
  }

  @OnLeadershipAcquired(SHARD_ELECTION)
  acquired(term: LeaderTerm): void {
    this.events.shardLeadership(SHARD_ELECTION, 'acquired', term);
  }

  @OnLeadershipLost(SHARD_ELECTION)
  lost(term: LeaderTerm): void {
    this.events.shardLeadership(SHARD_ELECTION, 'lost', term);
  }
}
