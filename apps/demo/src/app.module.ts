import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import {
  LeaderHealthIndicator,
  LeaderModule,
  type LeaderModuleOptions,
  type RegisterElectionOptions,
} from 'nest-leader';
import { FileLock } from 'nest-leader/core';
import type { DemoConfig } from './demo.config.js';
import { DEMO_CONFIG, SHARD_ELECTION } from './demo.constants.js';
import { DebugController } from './debug/debug.controller.js';
import { EventLog } from './event-log.service.js';
import { HealthController } from './health/health.controller.js';
import { JobDispatcher } from './jobs/job-dispatcher.service.js';
import { JobsController } from './jobs/jobs.controller.js';
import { Reconciler } from './jobs/reconciler.service.js';
import { ShardReconciler } from './jobs/shard-reconciler.service.js';
import { TermHeartbeat } from './jobs/term-heartbeat.service.js';
import { LeaderController } from './leadership/leader.controller.js';
import { LeadershipEventsListener } from './leadership/leadership-events.listener.js';
import { ShutdownEventsListener } from './shutdown-events.listener.js';

/** The second election: the shard reconciler's own Lease, the rest as the default election's. */
export function shardElectionOptions(config: DemoConfig): RegisterElectionOptions {
  return {
    name: SHARD_ELECTION,
    leaseName: config.shardLeaseName,
    lock:
      config.lock === 'file' && config.lockDir
        ? new FileLock({ name: config.shardLeaseName, directory: config.lockDir })
        : config.lock,
  };
}

/** The library options for a validated demo configuration. */
export function leaderModuleOptions(config: DemoConfig): LeaderModuleOptions {
  return {
    leaseName: config.leaseName,
    namespace: config.namespace,
    identity: config.identity,
    leaseDurationSeconds: config.leaseDurationSeconds,
    renewDeadlineSeconds: config.renewDeadlineSeconds,
    retryPeriodSeconds: config.retryPeriodSeconds,
    newerTemplateWaitSeconds: config.newerTemplateWaitSeconds,
    // LEADER_LOCK=file with LEADER_LOCK_DIR: the file lock in that directory (the launcher gives
    // each run its own); otherwise the library's choice (`auto`: Lease if a cluster is
    // configured, else a file in this user's directory, see FileLock).
    lock:
      config.lock === 'file' && config.lockDir
        ? new FileLock({ name: config.leaseName, directory: config.lockDir })
        : config.lock,
    shutdownGraceMs: config.shutdownGraceMs,
    // Inherited by the shard election. Metrics go to prom-client's global registry, which
    // PrometheusModule serves on GET /metrics.
    metrics: config.metrics,
    kubernetesEvents: config.kubernetesEvents,
    podRoleLabel: config.podRoleLabel,
  };
}

/**
 * The demo application: leader-only cron, interval and HTTP work on the default election, a
 * shard reconciler on a second election (its own Lease), probes and GET /leader.
 */
@Module({})
export class AppModule {
  static forRoot(config: DemoConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ScheduleModule.forRoot(),
        // No Terminus error log: on a follower, /readyz is supposed to fail (every probe).
        TerminusModule.forRoot({ logger: false }),
        LeaderModule.forRoot(leaderModuleOptions(config)),
        // GET /metrics on every replica: the elections' metrics and Node's defaults.
        ...(config.metrics ? [PrometheusModule.register()] : []),
        // Namespace, identity, timings and grace come from forRoot(); the shard has its own Lease.
        LeaderModule.registerElection(shardElectionOptions(config)),
      ],
      controllers: [
        HealthController,
        LeaderController,
        JobsController,
        ...(config.debugHooks ? [DebugController] : []),
      ],
      providers: [
        { provide: DEMO_CONFIG, useValue: config },
        LeaderHealthIndicator,
        EventLog,
        LeadershipEventsListener,
        ShutdownEventsListener,
        JobDispatcher,
        Reconciler,
        ShardReconciler,
        TermHeartbeat,
      ],
    };
  }
}
