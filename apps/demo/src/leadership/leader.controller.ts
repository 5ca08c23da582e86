import { Controller, Get, Optional } from '@nestjs/common';
import { InjectElection, LeaderElectionService, ShardedElectionService } from 'nest-leader';
import { SHARDED_ELECTION } from '../demo.constants.js';
import type { LeaderStatus } from '../demo-events.js';

/**
 * GET /leader: who leads the default election and which shards of `orders` this replica owns,
 * as this replica sees it. Answers on every replica.
 */
@Controller('leader')
export class LeaderController {
  constructor(
    private readonly leader: LeaderElectionService,
    /** Absent when sharding is off (the lock is not a Kubernetes Lease). */
    @Optional()
    @InjectElection(SHARDED_ELECTION)
    private readonly orders?: ShardedElectionService,
  ) {}

  @Get()
  status(): LeaderStatus {
    return {
      name: this.leader.leader ?? null,
      identity: this.leader.identity,
      isLeader: this.leader.isLeader(),
      leaseTransitions: this.leader.leaseTransitions ?? null,
      pid: process.pid,
      shards: this.orders
        ? {
            election: SHARDED_ELECTION,
            shards: this.orders.shards,
            owned: this.orders.ownedShards(),
            coordinator: this.orders.isCoordinator(),
            perMember: Object.fromEntries(this.orders.shardsPerMember()),
          }
        : null,
    };
  }
}
