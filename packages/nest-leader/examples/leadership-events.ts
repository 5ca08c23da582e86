import { Injectable, Logger } from '@nestjs/common';
import {
  type LeaderTerm,
  OnLeaderChanged,
  OnLeadershipAcquired,
  OnLeadershipLost,
} from 'nest-leader';

@Injectable()
export class StreamConsumer {
  private readonly logger = new Logger(StreamConsumer.name);

  @OnLeadershipAcquired()
  start(term: LeaderTerm): void {
    // Must not block: start background work and stop it with the term.
    this.logger.log(`Leading (term ${term.leaseTransitions}); consuming`);
    void this.consume(term.signal);
  }

  @OnLeadershipLost()
  async stop(term: LeaderTerm): Promise<void> {
    // Awaited (up to shutdownGraceMs) before the Lease is released or re-campaigned.
    this.logger.log(`Term ${term.leaseTransitions} ended; flushing`);
    await this.flush();
  }

  @OnLeaderChanged()
  leaderChanged(identity: string): void {
    this.logger.log(`Leader is now ${identity}`);
  }

  private async consume(_signal: AbortSignal): Promise<void> {}
  private async flush(): Promise<void> {}
}
