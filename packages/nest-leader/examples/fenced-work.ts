import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { currentTerm, LeaderElectionService, LeaderOnly } from 'nest-leader';

@Injectable()
export class Settlement {
  constructor(private readonly election: LeaderElectionService) {}

  // One GET of the Lease before the run (failed: skipped, as on a follower) and one after
  // (failed: LeadershipLostDuringWorkError, result withheld). About 2 requests per run.
  @LeaderOnly({ verify: 'before-and-after' })
  @Interval(60_000)
  async settle(): Promise<void> {
    const token = currentTerm()!.leaseTransitions; // fence every downstream write with it
    await this.writeBatch(token);
  }

  /** By hand: one GET of the Lease, true only if it still names this replica in this term. */
  async settleIfStillLeader(): Promise<boolean> {
    if (!(await this.election.verifyLeadership({ signal: AbortSignal.timeout(2_000) }))) {
      return false;
    }
    await this.writeBatch(this.election.term!.leaseTransitions);
    return true;
  }

  private async writeBatch(_fencingToken: number): Promise<void> {}
}
