import { Controller, Get } from '@nestjs/common';
import { LeaderElectionService } from 'nest-leader';
import type { LeaderStatus } from '../demo-events.js';

/** GET /leader: who leads, as this replica sees it. Answers on every replica. */
@Controller('leader')
export class LeaderController {
  constructor(private readonly leader: LeaderElectionService) {}

  @Get()
  status(): LeaderStatus {
    return {
      name: this.leader.leader ?? null,
      identity: this.leader.identity,
      isLeader: this.leader.isLeader(),
      leaseTransitions: this.leader.leaseTransitions ?? null,
      pid: process.pid,
    };
  }
}
