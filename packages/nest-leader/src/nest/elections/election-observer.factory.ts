import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type ElectionObserver, noopElectionObserver } from '../../core/election-observer.js';
import { LeaseLock } from '../../locks/kubernetes-object/lease.lock.js';
import type { ResourceLock } from '../../locks/resource-lock.js';
import { observabilityMessages } from '../../observability/observability.messages.js';
import { combineElectionObservers } from '../../observability/composite.observer.js';
import type {
  LeaderOnlyCallTally,
  ScheduleSlotCounter,
} from '../../observability/election-metrics.interfaces.js';
import { LeaseEventsObserver } from '../../observability/lease-events.observer.js';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';
import {
  DEFAULT_ROLE_LABEL_KEY,
  PodRoleLabelObserver,
} from '../../observability/pod-role-label.observer.js';
import { PrometheusElectionObserver } from '../../observability/prometheus.observer.js';
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
  /** Present with `metrics`: the counter of one leader-only recurring job's slots. */
  scheduleSlotCounter?(election: string, job: string): ScheduleSlotCounter;
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
            labelKey:
              (typeof podRoleLabel === 'object' ? podRoleLabel.labelKey : undefined) ??
              defaultRoleLabelKey(options.name),
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
      scheduleSlotCounter: (election: string, job: string) =>
        prometheus.scheduleSlotCounter(election, job),
    }),
  });
}

/**
 * Each election labels the Pod under its own key, so two elections never overwrite each
 * other's label: the default election `nest-leader/role`, a named one `nest-leader/role-<name>`
 * (found on real pods: a replica that led the demo's shard election but followed the default
 * one was labelled `leader` or `standby` by whichever election wrote last).
 */
function defaultRoleLabelKey(election: string): string {
  return election === DEFAULT_ELECTION_NAME
    ? DEFAULT_ROLE_LABEL_KEY
    : `${DEFAULT_ROLE_LABEL_KEY}-${election}`;
}

function eventLogger(logger: Logger) {
  return { warn: (m: string) => logger.warn(m), debug: (m: string) => logger.debug(m) };
}
