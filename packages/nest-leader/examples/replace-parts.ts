import { KubeConfig } from '@kubernetes/client-node';
import { Injectable, Module } from '@nestjs/common';
import {
  type ElectionObserver,
  getElectionLockToken,
  getElectionObserverToken,
  LeaderModule,
  type ResourceLock,
} from 'nest-leader';
import { LeaseLock } from 'nest-leader/core';

/** Counts term starts per election; the default election's name is 'default'. */
@Injectable()
export class TermCounter implements ElectionObserver {
  readonly starts = new Map<string, number>();

  termStarted({ election }: { election: string }): void {
    this.starts.set(election, (this.starts.get(election) ?? 0) + 1);
  }
}

/** Your own lock for one election, built by Nest with its own dependencies. */
@Injectable()
export class ShardLockFactory {
  create(): ResourceLock {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
    return new LeaseLock({
      kubeConfig,
      name: 'orders-shard-0',
      namespace: 'orders',
      identity: process.env.POD_NAME ?? 'local',
    });
  }
}

@Module({
  imports: [
    LeaderModule.forRoot({ leaseName: 'billing-worker' }),
    LeaderModule.registerElection({
      name: 'orders-shard-0',
      leaseName: 'orders-shard-0',
      // Added after the election's own providers, so they replace them, for this election only.
      providers: [
        ShardLockFactory,
        {
          provide: getElectionLockToken('orders-shard-0'),
          inject: [ShardLockFactory],
          useFactory: (factory: ShardLockFactory) => factory.create(),
        },
        TermCounter,
        { provide: getElectionObserverToken('orders-shard-0'), useExisting: TermCounter },
      ],
    }),
  ],
})
export class AppModule {}
