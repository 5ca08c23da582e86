import { Controller, Get, Injectable, Post } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { Interval } from '@nestjs/schedule';
import { currentTerm, LeaderOnly } from 'nest-leader';

@Injectable()
export class Reconciler {
  // Decorator order does not matter: @Interval may go above or below @LeaderOnly().
  @Interval(5_000)
  @LeaderOnly()
  async reconcile(): Promise<void> {
    const term = currentTerm()!; // the term this invocation started under
    for (const batch of await this.pendingBatches()) {
      // Re-checks the renew deadline now, so a process paused past it stops here on waking.
      if (!term.isLive()) return;
      // leaseTransitions is a fencing token: strictly increasing per Lease.
      await this.apply(batch, { fencingToken: term.leaseTransitions, signal: term.signal });
    }
  }

  private async pendingBatches(): Promise<string[]> {
    return [];
  }

  private async apply(_batch: string, _opts: { fencingToken: number; signal: AbortSignal }) {}
}

/** Every method of the class is leader-only (lifecycle hooks and leadership handlers excepted). */
@LeaderOnly()
@Injectable()
export class QueueConsumer {
  poll(): void {}
  ack(): void {}
}

@Controller('jobs')
export class JobsController {
  // On a follower: 503 Service Unavailable, `Retry-After`, and the leader in the JSON body.
  @Post('rebuild')
  @LeaderOnly()
  rebuild(): { started: true } {
    return { started: true };
  }

  // Answer followers yourself: the function's result is the response.
  @Get('status')
  @LeaderOnly({ onFollower: ({ leader }) => ({ leader, running: false }) })
  status(): { leader: string; running: boolean } {
    return { leader: 'me', running: true };
  }
}

@Controller()
export class InventoryRpc {
  // On a follower the caller gets an RpcException error reply naming the leader.
  @MessagePattern('inventory.reserve')
  @LeaderOnly()
  reserve(): { reserved: true } {
    return { reserved: true };
  }
}

@Injectable()
export class Exporter {
  // Plain methods are skipped on followers by default; 'throw' raises NotLeaderException instead.
  @LeaderOnly({ onFollower: 'throw' })
  exportNow(): void {}
}
