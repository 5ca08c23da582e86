import { Controller, Get } from '@nestjs/common';
import { InjectElection, LeaderElectionService } from 'nest-leader';
import { SHARD_ELECTION } from '../demo.constants.js';
import type { LeaderStatus } from '../demo-events.js';

/** GET /leader: who leads each election, as this replica sees it. Answers on every replica. */
@Controller('leader')
export class LeaderController {
  constructor(
    private readonly leader: LeaderElectionService,
    @InjectElection(SHARD_ELECTION) private readonly shard: LeaderElectionService,
  ) {}

  @Get()
  status(): LeaderStatus {
    return {
      name: this.leader.leader ?? null,
      identity: this.leader.identity,
      isLeader: this.leader.isLeader(),
      leaseTransitions: this.leader.leaseTransitions ?? null,
      pid: process.pid,
      shard: {
        election: SHARD_ELECTION,
        name: this.shard.leader ?? null,
        isLeader: this.shard.isLeader(),
        leaseTransitions: this.shard.leaseTransitions ?? null,
      },
    };
  }
}
