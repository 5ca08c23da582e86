import { Injectable, Module } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import {
  currentTerm,
  InjectElection,
  LeaderElectionService,
  LeaderModule,
  LeaderOnly,
  type LeaderTerm,
  OnLeadershipAcquired,
} from 'nest-leader';

@Injectable()
export class OrdersShards {
  constructor(@InjectElection('orders-shard-0') private readonly shard0: LeaderElectionService) {}

  // Runs only on the replica that holds the Lease orders-shard-0.
  @LeaderOnly('orders-shard-0')
  @Interval(5_000)
  async reconcileShard0(): Promise<void> {
    const term = currentTerm('orders-shard-0')!; // this election's term, fencing token included
    await this.reconcile(0, term);
  }

  // The long form, with a follower behaviour of its own.
  @LeaderOnly({ election: 'orders-shard-1', onFollower: 'skip' })
  @Interval(5_000)
  async reconcileShard1(): Promise<void> {
    await this.reconcile(1, currentTerm('orders-shard-1')!);
  }

  @OnLeadershipAcquired('orders-shard-1')
  shard1Acquired(term: LeaderTerm): void {
    console.log(`leading orders-shard-1 (term ${term.leaseTransitions})`);
  }

  status() {
    return { shard0: { leader: this.shard0.leader ?? null, isLeader: this.shard0.isLeader() } };
  }

  private async reconcile(_shard: number, _term: LeaderTerm): Promise<void> {}
}

@Injectable()
export class InvoiceJobs {
  @LeaderOnly() // the default election: forRoot()'s Lease, billing-worker
  @Interval(60_000)
  closeInvoices(): void {}
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    // The default election, and the defaults of every named one (identity, namespace, timings…).
    LeaderModule.forRoot({ leaseName: 'billing-worker', retryPeriodSeconds: 2 }),
    // Named elections: each its own Lease, term and elector; any forRoot() option can be overridden.
    LeaderModule.registerElection({ name: 'orders-shard-0', leaseName: 'orders-shard-0' }),
    LeaderModule.registerElection({
      name: 'orders-shard-1',
      leaseName: 'orders-shard-1',
      leaseDurationSeconds: 30,
      renewDeadlineSeconds: 20,
    }),
  ],
  providers: [OrdersShards, InvoiceJobs],
})
export class AppModule {}
