import type { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector, LeaseLock, resolveIdentity } from 'nest-leader/core';
import {
  combineElectionObservers,
  LeaseEventsObserver,
  PodRoleLabelObserver,
  PrometheusElectionObserver,
} from 'nest-leader/observability';
import { register } from 'prom-client';

/** The core elector with metrics, Events on the Lease and pod role labels. */
export function observedElector(kubeConfig: KubeConfig): LeaderElector {
  const namespace = 'shop';
  const leaseName = 'billing-worker';
  const metrics = new PrometheusElectionObserver({ registry: register });
  const events = new LeaseEventsObserver({ kubeConfig, namespace, leaseName });
  const labels = new PodRoleLabelObserver({ kubeConfig }); // POD_NAME, POD_NAMESPACE
  const observer = combineElectionObservers(metrics, events, labels);
  return new LeaderElector({
    name: leaseName, // the `name` label of the metrics
    lock: new LeaseLock({ kubeConfig, name: leaseName, namespace }),
    identity: resolveIdentity(),
    observer,
    callbacks: {
      // Flip this pod's label and write the Event before the Lease is released.
      onStoppedLeading: () => observer.flush(),
    },
  });
}
