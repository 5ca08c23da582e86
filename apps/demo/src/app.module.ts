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
import { DEMO_CONFIG, ORDER_SHARDS, SHARDED_ELECTION } from './demo.constants.js';
import { DebugController } from './debug/debug.controller.js';
import { EventLog } from './event-log.service.js';
import { HealthController } from './health/health.controller.js';
import { JobDispatcher } from './jobs/job-dispatcher.service.js';
import { JobsController } from './jobs/jobs.controller.js';
import { Reconciler } from './jobs/reconciler.service.js';
import type { OrderSharding } from './jobs/order-sharding.js';
import { ShardReconciler } from './jobs/shard-reconciler.service.js';
import { TermHeartbeat } from './jobs/term-heartbeat.service.js';
import { LeaderController } from './leadership/leader.controller.js';
import { LeadershipEventsListener } from './leadership/leadership-events.listener.js';
import { ShutdownEventsListener } from './shutdown-events.listener.js';

/**
 * The sharded election `orders`: 16 shards over every replica, coordinated on the Lease
 * `SHARD_LEASE_NAME`; the rest (namespace, identity, timings, metrics, Events) as the default
 * election's. Sharding needs a Kubernetes Lease lock: the app registers it only then.
 */
export function shardedElectionOptions(config: DemoConfig): RegisterElectionOptions {
  return {
    name: SHARDED_ELECTION,
    leaseName: config.shardLeaseName,
    shards: ORDER_SHARDS,
    lock: 'kubernetes',
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
    newerTemplateSettleSeconds: config.newerTemplateSettleSeconds,
    // LEADER_LOCK=file with LEADER_LOCK_DIR: the file lock in that directory (the launcher gives
    // each run its own); otherwise the library's choice (`auto`: Lease if a cluster is
    // configured, else a file in this user's directory, see FileLock).
    lock:
      config.lock === 'file' && config.lockDir
        ? new FileLock({ name: config.leaseName, directory: config.lockDir })
        : config.lock,
    shutdownGraceMs: config.shutdownGraceMs,
    // Inherited by the sharded election. Metrics go to prom-client's global registry, which
    // PrometheusModule serves on GET /metrics.
    metrics: config.metrics,
    kubernetesEvents: config.kubernetesEvents,
    podRoleLabel: config.podRoleLabel,
  };
}

/**
 * The demo application: leader-only cron, interval and HTTP work on the default election, an
 * order reconciler sharded over every replica (the sharded election `orders`, when the lock is
 * a Kubernetes Lease), probes and GET /leader.
 */
@Module({})
export class AppModule {
  static forRoot(config: DemoConfig, sharding: OrderSharding): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ScheduleModule.forRoot(),
        // No Terminus error log: on a follower, /readyz is supposed to fail (every probe).
        TerminusModule.forRoot({ logger: false }),
        LeaderModule.forRoot(leaderModuleOptions(config)),
        // GET /metrics on every replica: the elections' metrics and Node's defaults.
        ...(config.metrics ? [PrometheusModule.register()] : []),
        // Namespace, identity, timings and grace come from forRoot(); the shards have their Leases.
        ...(sharding.enabled
          ? [LeaderModule.registerElection(shardedElectionOptions(config))]
          : []),
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
        ...(sharding.enabled ? [ShardReconciler] : []),
        TermHeartbeat,
      ],
    };
  }
}
