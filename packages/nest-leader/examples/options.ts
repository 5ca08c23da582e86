import { Module } from '@nestjs/common';
import { LeaderModule } from 'nest-leader';

@Module({
  imports: [
    LeaderModule.forRoot({
      leaseName: 'billing-worker', // required: the Lease every replica competes for
      namespace: 'billing', // default: POD_NAMESPACE, SA namespace file, kubeconfig, 'default'
      identity: process.env.POD_NAME, // default: POD_NAME, else `${hostname}-${pid}`
      leaseDurationSeconds: 15, // whole seconds; followers wait this long after the last renewal
      renewDeadlineSeconds: 10, // the leader steps down after failing to renew this long
      retryPeriodSeconds: 2, // time between acquire/renew attempts
      releaseOnShutdown: true, // hand the Lease over at once on shutdown
      lock: 'kubernetes', // 'auto' | 'kubernetes' | 'file' | 'memory' | a ResourceLock
      kubeConfig: '/etc/leader/kubeconfig', // a path or a KubeConfig; default: KUBECONFIG, in-cluster, ~/.kube/config
      shutdownGraceMs: 10_000, // bound on draining in-flight @LeaderOnly() work
      onLost: 'recampaign', // or 'stop': stop campaigning after losing leadership
      catchUp: 'skip', // leader-only @Cron/@Interval slots missed in a failover: 'skip' | 'once' | 'all'
      isGlobal: true, // default: LeaderElectionService is injectable everywhere
    }),
  ],
})
export class AppModule {}
