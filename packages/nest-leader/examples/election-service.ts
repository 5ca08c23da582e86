import { Controller, Get, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { LeaderElectionService } from 'nest-leader';

@Controller('leader')
export class LeaderController {
  constructor(private readonly election: LeaderElectionService) {}

  @Get()
  whoLeads() {
    return {
      identity: this.election.identity, // this replica
      leader: this.election.leader ?? null, // last observed holder
      isLeader: this.election.isLeader(), // re-checks the renew deadline now
      leaseTransitions: this.election.term?.leaseTransitions ?? null,
    };
  }
}

@Injectable()
export class CacheWarmer implements OnApplicationBootstrap {
  constructor(private readonly election: LeaderElectionService) {}

  onApplicationBootstrap(): void {
    // Boot must not wait for leadership: do it in the background.
    void this.warmWhenLeading();
  }

  private async warmWhenLeading(): Promise<void> {
    const term = await this.election.waitForLeadership({ signal: AbortSignal.timeout(60_000) });
    await this.warm(term.signal);
  }

  private async warm(_signal: AbortSignal): Promise<void> {}
}
