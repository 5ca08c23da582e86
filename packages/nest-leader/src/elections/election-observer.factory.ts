import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type ElectionObserver, noopElectionObserver } from '../election/election-observer.js';
import { LeaseLock } from '../locks/lease.lock.js';
import type { ResourceLock } from '../locks/resource-lock.js';
import { observabilityMessages } from '../messages.js';
import { combineElectionObservers } from '../observability/composite.observer.js';
import type { LeaderOnlyCallTally } from '../observability/election-metrics.interface.js';
import { LeaseEventsObserver } from '../observability/lease-events.observer.js';
import { PodRoleLabelObserver } from '../observability/pod-role-label.observer.js';
import { PrometheusElectionObserver } from '../observability/prometheus.observer.js';
import { withModuleOptionNames } from './election-options.mapping.js';
import type { ResolvedElectionOptions } from './elections.interfaces.js';

/**
 * The observer the election's `metrics`, `kubernetesEvents` and `podRoleLabel` options ask for:
 * the default provider of `getElectionObserverToken(name)`. `flush()` is awaited before the
 * Lease is released (see `withObserverFlush`), and the metrics leave the gauges when the
 * application shuts down.
 */
export interface ConfiguredElectionObserver extends ElectionObserver, OnApplicationShutdown {
  /** Resolves when the Events and labels queued so far are written or given up. */
  flush(): Promise<void>;
  /** Present with `metrics`: the counts of one `@LeaderOnly()` handler. */
  leaderOnlyCallTally?(election: string, handler: string): LeaderOnlyCallTally;
}

/**
 * Builds the observers the options turn on (none: an observer that does nothing).
 * @throws MissingPeerDependencyError for `metrics` without prom-client;
 *   InvalidLeaderElectionOptionError naming the option (e.g. `podName` without `POD_NAME`).
 */
export function buildElectionObserver(
  options: ResolvedElectionOptions,
  lock: ResourceLock,
): ConfiguredElectionObserver | typeof noopElectionObserver {
  const { metrics, kubernetesEvents, podRoleLabel } = options.observability;
  const logger = new Logger('LeaderElection');
  const build = <T>(option: 'metrics' | 'kubernetesEvents' | 'podRoleLabel', create: () => T) =>
    withModuleOptionNames(options.name, option, create);

  const prometheus = metrics
    ? build(
        'metrics',
        () =>
          new PrometheusElectionObserver({
            registry: typeof metrics === 'object' ? metrics.registry : undefined,
            clock: options.clock,
          }),
      )
    : undefined;
  const observers: ElectionObserver[] = prometheus ? [prometheus] : [];
  const lease = lock instanceof LeaseLock ? lock : undefined;
  for (const [option, enabled] of [
    ['kubernetesEvents', kubernetesEvents],
    ['podRoleLabel', podRoleLabel],
  ] as const) {
    if (enabled && !lease) {
      logger.warn(observabilityMessages.needsLease(option, options.name, lock.description));
    }
  }
  if (lease && kubernetesEvents) {
    observers.push(
      build(
        'kubernetesEvents',
        () =>
          new LeaseEventsObserver({
            kubeConfig: lease.kubeConfig,
            namespace: lease.namespace,
            leaseName: lease.name,
            reportingController:
              typeof kubernetesEvents === 'object'
                ? kubernetesEvents.reportingController
                : undefined,
            logger: eventLogger(logger),
          }),
      ),
    );
  }
  if (lease && podRoleLabel) {
    observers.push(
      build(
        'podRoleLabel',
        () =>
          new PodRoleLabelObserver({
            kubeConfig: lease.kubeConfig,
            labelKey: typeof podRoleLabel === 'object' ? podRoleLabel.labelKey : undefined,
            logger: eventLogger(logger),
          }),
      ),
    );
  }
  // Nothing asked for: the library's do-nothing observer, as without these options.
  if (observers.length === 0) return noopElectionObserver;
  const combined = combineElectionObservers(...observers);
  return Object.assign(combined, {
    onApplicationShutdown: () => prometheus?.close(),
    ...(prometheus && {
      leaderOnlyCallTally: (election: string, handler: string) =>
        prometheus.leaderOnlyCallTally(election, handler),
    }),
  });
}

function eventLogger(logger: Logger) {
  return { warn: (m: string) => logger.warn(m), debug: (m: string) => logger.debug(m) };
}
