import { Logger, type Provider } from '@nestjs/common';
import { InvalidLeaderElectionOptionError } from '../../errors.js';
import { LeaseLock } from '../../locks/kubernetes-object/lease.lock.js';
import { KubernetesShardLeaseStore } from '../../sharding/kubernetes-shard-lease-store.js';
import type { ShardObserver } from '../../sharding/shard-observer.js';
import { ShardedElection } from '../../sharding/sharded-election.js';
import { combineShardObservers, type Flushable } from '../../observability/composite.observer.js';
import { observabilityMessages } from '../../observability/observability.messages.js';
import { PrometheusShardObserver } from '../../observability/prometheus-shard.observer.js';
import { ShardEventsObserver } from '../../observability/shard-events.observer.js';
import { withModuleOptionNames } from '../elections/election-options.mapping.js';
import { ElectionDirectory } from '../elections/election.directory.js';
import { buildElectionLock } from '../elections/election-lock.factory.js';
import { resolveElectionOptions } from '../elections/election-options.resolver.js';
import { getElectionGivenOptionsToken } from '../elections/election.providers.js';
import { getElectionOptionsToken, getLeaderElectionToken } from '../elections/election.tokens.js';
import type { ResolvedElectionOptions } from '../elections/elections.interfaces.js';
import { LEADER_MODULE_OPTIONS } from '../leader.module-definition.js';
import type { ElectionOptions, LeaderModuleOptions } from '../leader-module-options.interfaces.js';
import { nestMessages } from '../nest.messages.js';
import { toElectionLogger } from '../nest-logger.adapter.js';
import type { ShardedElectionModuleOptions } from './sharded-election-options.interfaces.js';
import { ShardedElectionService } from './sharded-election.service.js';
import { ShardedLeaderOnlyGate } from './sharded-leader-only.gate.js';

/**
 * The providers of one sharded election: its resolved options (the election's, given under
 * `getElectionGivenOptionsToken(name)` by `registerElection` or `registerElectionAsync`, over
 * `forRoot()`'s) and its `ShardedElectionService` under the election's token (what
 * `@InjectElection(name)` injects), registered in the application's directory so
 * `@LeaderOnly(name)` finds its gate.
 */
export function createShardedElectionProviders(
  name: string,
  sharded: ShardedElectionModuleOptions,
): Provider[] {
  return [
    {
      provide: getElectionOptionsToken(name),
      inject: [
        getElectionGivenOptionsToken(name),
        { token: LEADER_MODULE_OPTIONS, optional: true },
      ],
      useFactory: (given: ElectionOptions, defaults?: LeaderModuleOptions) =>
        resolveElectionOptions(name, given, defaults),
    },
    {
      provide: getLeaderElectionToken(name),
      inject: [getElectionOptionsToken(name), ElectionDirectory],
      useFactory: (options: ResolvedElectionOptions, directory: ElectionDirectory) => {
        const service = buildShardedElection(name, options, sharded);
        directory.registerSharded(name, service.gate);
        return service;
      },
    },
  ];
}

/** Exported tokens of a sharded election. */
export function shardedElectionExports(name: string): ReturnType<typeof getLeaderElectionToken>[] {
  return [getLeaderElectionToken(name), getElectionOptionsToken(name)];
}

function buildShardedElection(
  name: string,
  options: ResolvedElectionOptions,
  sharded: ShardedElectionModuleOptions,
): ShardedElectionService {
  const lease = sharded.shardStore ? undefined : leaseLockOf(name, options);
  const store =
    sharded.shardStore ??
    new KubernetesShardLeaseStore({
      kubeConfig: lease!.kubeConfig,
      namespace: lease!.namespace,
      identity: options.identity,
    });
  const observer = shardObserverOf(name, options, lease);
  // The gate runs the work the election's drains wait for; it is built right after it.
  const built: { gate?: ShardedLeaderOnlyGate } = {};
  const election = rethrowNamed(
    name,
    () =>
      new ShardedElection({
        name: options.leaseName,
        shards: sharded.shards!,
        store,
        identity: options.identity,
        ...options.timings,
        drainTimeoutSeconds: sharded.drainTimeoutSeconds,
        clock: options.clock,
        logger: toElectionLogger(new Logger('ShardedElection')),
        callbacks: { onShardStopped: (term) => built.gate?.drain(term) },
        observer,
      }),
  );
  const gate = new ShardedLeaderOnlyGate(name, election);
  built.gate = gate;
  const startMessage = nestMessages.shardedElectionStarting({
    election: name,
    identity: options.identity,
    leaseName: options.leaseName,
    shards: election.shards,
    store: store.description,
    ...options.timings,
  });
  return new ShardedElectionService(name, election, gate, startMessage, observer);
}

/**
 * The observers the election's `metrics` and `kubernetesEvents` options ask for: Prometheus
 * metrics, and ShardsMoved Events on the assignment Lease (a Lease lock only: with a
 * `shardStore` of the caller's, one warning and no Events).
 */
function shardObserverOf(
  name: string,
  options: ResolvedElectionOptions,
  lease: LeaseLock | undefined,
): (ShardObserver & Required<Flushable>) | undefined {
  const { metrics, kubernetesEvents } = options.observability;
  const observers: ShardObserver[] = [];
  if (metrics) {
    observers.push(
      withModuleOptionNames(
        name,
        'metrics',
        () =>
          new PrometheusShardObserver({
            registry: metrics === true ? undefined : metrics.registry,
          }),
      ),
    );
  }
  if (kubernetesEvents && !lease) {
    new Logger('ShardedElection').warn(
      observabilityMessages.needsLease('kubernetesEvents', name, 'the given shardStore'),
    );
  }
  if (kubernetesEvents && lease) {
    const logger = new Logger('ShardedElection');
    observers.push(
      withModuleOptionNames(
        name,
        'kubernetesEvents',
        () =>
          new ShardEventsObserver({
            kubeConfig: lease.kubeConfig,
            namespace: lease.namespace,
            election: options.leaseName,
            identity: options.identity,
            reportingController:
              typeof kubernetesEvents === 'object'
                ? kubernetesEvents.reportingController
                : undefined,
            clock: options.clock,
            logger: { warn: (m: string) => logger.warn(m), debug: (m: string) => logger.debug(m) },
          }),
      ),
    );
  }
  return observers.length > 0 ? combineShardObservers(...observers) : undefined;
}

/** The election's Lease lock: a sharded election needs Leases it can list. */
function leaseLockOf(name: string, options: ResolvedElectionOptions): LeaseLock {
  const lock = buildElectionLock(options);
  if (!(lock instanceof LeaseLock)) {
    throw new InvalidLeaderElectionOptionError(
      'lock',
      nestMessages.shardedLockRule,
      options.lock,
      name,
    );
  }
  return lock;
}

function rethrowNamed<T>(election: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof InvalidLeaderElectionOptionError) || error.election) throw error;
    throw new InvalidLeaderElectionOptionError(error.option, error.rule, error.value, election);
  }
}
