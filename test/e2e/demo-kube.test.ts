/**
 * The demo's failover scenario on a Kubernetes Lease in the real kube-apiserver: the replicas
 * run as the demo's ServiceAccount, bound by the demo's own Role (apps/demo/deploy).
 */
import assert from 'node:assert/strict';
import { CoordinationV1Api, EventsV1Api } from '@kubernetes/client-node';
import { readLease } from '@nest-leader/demo/launcher/kube-access';
import { getTestCluster, kubeConfigFor, readAuditEvents } from '../support/cluster.js';
import { eventually, found } from '../support/eventually.js';
import { provisionDemoServiceAccount } from './support/demo-service-account.js';
import { describeFailoverScenario } from './support/failover-scenario.js';

describeFailoverScenario('demo on a Kubernetes Lease (real kube-apiserver)', async (leaseName) => {
  const cluster = getTestCluster();
  const admin = kubeConfigFor(cluster);
  const namespace = cluster.namespace;
  const serviceAccount = await provisionDemoServiceAccount(cluster, leaseName);
  return {
    kind: 'kubernetes',
    env: {
      LEADER_LOCK: 'kubernetes',
      KUBECONFIG: serviceAccount.kubeconfigPath,
      LEASE_NAMESPACE: namespace,
      LEADER_LOCK_DIR: undefined,
    },
    async readLease() {
      const lease = await readLease(admin, namespace, leaseName);
      return (
        lease?.spec && {
          holderIdentity: lease.spec.holderIdentity ?? '',
          leaseTransitions: lease.spec.leaseTransitions ?? 0,
        }
      );
    },
    async verifyBackend() {
      // Every write to this Lease came from the demo's ServiceAccount: the replicas ran with
      // exactly the demo's Role, not as an admin.
      if (!cluster.auditLogPath) return;
      const writes = readAuditEvents(cluster).filter(
        (e) => e.objectRef?.name === leaseName && (e.verb === 'create' || e.verb === 'update'),
      );
      assert.ok(writes.length > 0, 'the audit log has the Lease writes');
      assert.deepEqual([...new Set(writes.map((e) => e.user.username))], [serviceAccount.username]);
    },
    async verifyEvents(leader) {
      // KUBERNETES_EVENTS is on by default with LEADER_LOCK=kubernetes and the demo's Role
      // allows it: the first term is an Event on the Lease, as kubectl describe lease shows.
      const events = admin.makeApiClient(EventsV1Api);
      const became = await eventually(
        async () => {
          const { items } = await events.listNamespacedEvent({ namespace });
          const onLease = items.filter(
            (e) => e.regarding?.kind === 'Lease' && e.regarding.name === leaseName,
          );
          return found(
            onLease.find((e) => e.note?.startsWith(`${leader} became leader: `)),
            () => `no "${leader} became leader" Event: ${onLease.map((e) => e.note).join('; ')}`,
          );
        },
        { timeoutMs: 10_000 },
      );
      assert.equal(became.reason, 'LeaderElection');
      assert.equal(became.reportingController, 'nest-leader');
      assert.equal(became.reportingInstance, leader);
    },
    async dispose() {
      await admin
        .makeApiClient(CoordinationV1Api)
        .deleteNamespacedLease({ name: leaseName, namespace })
        .catch(() => {});
      await serviceAccount.dispose();
    },
  };
});
