/**
 * apps/demo/deploy: the manifests are valid for a real kube-apiserver (server-side apply,
 * dry-run), and they keep the properties their comments promise — minimal RBAC, probes wired
 * to the right endpoints, a rollout and a PodDisruptionBudget that leader-only readiness
 * cannot deadlock, a NetworkPolicy and an admission policy narrowing the pod patch.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type {
  KubernetesObject,
  V1Deployment,
  V1NetworkPolicy,
  V1PodDisruptionBudget,
  V1Role,
  V1RoleBinding,
  V1Service,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import {
  applyManifests,
  DEMO_DEPLOY_DIR,
  DEMO_NAMESPACE,
  DEMO_SERVICE_ACCOUNT,
  loadDemoManifests,
} from '@nest-leader/demo/launcher/demo-manifests';
import { POD_DELETION_COST_ANNOTATION } from 'nest-leader/observability';
import { getTestCluster, kubeConfigFor } from '../support/cluster.js';
import { manifestTimings } from '../chaos/pod-fault-kinds.js';

function only<T extends KubernetesObject>(objects: KubernetesObject[], kind: string): T {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0] as T;
}

/** An IntOrString of a rolling update or a PDB, resolved against `total` (percent rounds as Kubernetes does). */
function resolve(value: number | string | undefined, total: number, roundUp: boolean): number {
  if (value === undefined) return 0;
  if (typeof value === 'number') return value;
  const percent = Number(value.replace('%', ''));
  const exact = (percent * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

describe('apps/demo/deploy', { timeout: 60_000 }, () => {
  const objects = loadDemoManifests();
  const deployment = only<V1Deployment>(objects, 'Deployment');
  const pod = deployment.spec!.template.spec!;
  const container = pod.containers[0]!;
  const replicas = deployment.spec!.replicas!;

  it('lists a Namespace, ServiceAccount, Role, RoleBinding, Deployment, PodDisruptionBudget, Service, NetworkPolicy and a ValidatingAdmissionPolicy with its binding', () => {
    assert.deepEqual(objects.map((o) => o.kind).sort(), [
      'Deployment',
      'Namespace',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    const clusterScoped = [
      'Namespace',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ];
    for (const object of objects.filter((o) => !clusterScoped.includes(o.kind!))) {
      assert.equal(object.metadata?.namespace, DEMO_NAMESPACE, `${object.kind} namespace`);
    }
  });

  it("selects the Deployment's pods with its NetworkPolicy: in on the HTTP port only, out to the API server only", () => {
    const policy = only<V1NetworkPolicy>(objects, 'NetworkPolicy');
    const labels = deployment.spec!.template.metadata!.labels!;
    for (const [key, value] of Object.entries(policy.spec!.podSelector!.matchLabels ?? {})) {
      assert.equal(labels[key], value, `podSelector ${key}`);
    }
    assert.deepEqual(policy.spec!.policyTypes, ['Ingress', 'Egress']);
    assert.deepEqual(
      policy.spec!.ingress!.flatMap((rule) => rule.ports!.map((p) => p.port)),
      ['http'],
      "only the container's HTTP port is open (probes come from the node, always allowed)",
    );
    assert.ok(container.ports!.some((p) => p.name === 'http'));
    assert.deepEqual(
      policy.spec!.egress!.flatMap((rule) => rule.ports!.map((p) => p.port)),
      [443, 6443],
    );
  });

  it("binds a ValidatingAdmissionPolicy that lets the demo's ServiceAccount change only nest-leader/role* labels and the pod-deletion-cost annotation of Pods", () => {
    const policy = only<V1ValidatingAdmissionPolicy>(objects, 'ValidatingAdmissionPolicy');
    const binding = only<V1ValidatingAdmissionPolicyBinding>(
      objects,
      'ValidatingAdmissionPolicyBinding',
    );
    assert.equal(binding.spec!.policyName, policy.metadata!.name);
    assert.deepEqual(binding.spec!.validationActions, ['Deny']);
    assert.equal(policy.spec!.failurePolicy, 'Fail');
    assert.match(
      policy.spec!.matchConditions![0]!.expression,
      new RegExp(`'system:serviceaccount:' \\+ request.namespace \\+ ':${DEMO_SERVICE_ACCOUNT}'`),
    );
    assert.deepEqual(policy.spec!.matchConstraints!.resourceRules, [
      { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['pods'] },
    ]);
    // The one annotation exempted is the one PodRoleLabelObserver writes (the cluster tier
    // checks what the policy admits).
    const exempted = policy
      .spec!.validations!.flatMap((v) => [...v.expression.matchAll(/k == '([^']+)'/g)])
      .map((m) => m[1]);
    assert.deepEqual([...new Set(exempted)], [POD_DELETION_COST_ANNOTATION]);
  });

  it("grants get/list/watch/create/update on the namespace's leases (the sharded election's member Leases have no fixed names), create on events, get and patch on pods, to the demo ServiceAccount", () => {
    const role = only<V1Role>(objects, 'Role');
    assert.equal(role.metadata!.namespace, DEMO_NAMESPACE, 'a Role: the verbs reach one namespace');
    assert.deepEqual(role.rules, [
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'list', 'watch', 'create', 'update'],
      },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'patch'] },
    ]);
    // (deepEqual is strict: the lease rule has no resourceNames, and no delete or patch.)
    const roleText = readFileSync(join(DEMO_DEPLOY_DIR, 'role.yaml'), 'utf8');
    assert.match(roleText, /without resourceNames/, 'role.yaml says why the rule names no Lease');
    const deployment = only<V1Deployment>(objects, 'Deployment');
    const env = deployment.spec!.template.spec!.containers[0]!.env ?? [];
    assert.equal(env.find((e) => e.name === 'LEASE_NAME')?.value, 'nest-leader-demo');
    const binding = only<V1RoleBinding>(objects, 'RoleBinding');
    assert.deepEqual(binding.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: role.metadata!.name,
    });
    assert.deepEqual(binding.subjects, [
      { kind: 'ServiceAccount', name: DEMO_SERVICE_ACCOUNT, namespace: DEMO_NAMESPACE },
    ]);
    assert.equal(pod.serviceAccountName, DEMO_SERVICE_ACCOUNT);
  });

  it('runs 3 replicas named by the downward API, probed on /healthz (liveness) and /readyz (readiness)', () => {
    assert.equal(replicas, 3);
    const env = Object.fromEntries(
      container.env!.map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath ?? e.value]),
    );
    assert.equal(env.POD_NAME, 'metadata.name');
    assert.equal(env.POD_NAMESPACE, 'metadata.namespace');
    assert.equal(env.LEADER_LOCK, 'kubernetes', 'never a per-pod file lock in a cluster');
    assert.equal(env.POD_ROLE_LABEL, 'on', 'the Pods carry nest-leader/role');
    assert.equal(container.livenessProbe?.httpGet?.path, '/healthz');
    // A slow boot under load must not be killed by liveness before /healthz first answers.
    assert.equal(container.startupProbe?.httpGet?.path, '/healthz');
    const startup = container.startupProbe!;
    assert.ok(
      (startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3) >= 60,
      'the start-up budget covers a 30-50 s boot with room to spare',
    );
    assert.equal(container.readinessProbe?.httpGet?.path, '/readyz');
    assert.ok(container.resources?.requests?.cpu && container.resources.requests.memory);
    assert.ok(
      (pod.topologySpreadConstraints?.length ?? 0) > 0 || pod.affinity?.podAntiAffinity,
      'replicas are spread over nodes',
    );
  });

  it('rolls out keeping exactly one Ready pod (the old leader) until a new pod took over from it', () => {
    const strategy = deployment.spec!.strategy!;
    assert.equal(strategy.type, 'RollingUpdate');
    // The controller keeps at least replicas - maxUnavailable available (Ready) pods. Only the
    // leader is ever Ready: exactly 1 keeps the old leader until a new pod has taken the Lease
    // from it (yieldToNewerTemplate) — 0 would let a bad deploy stop it, 2 or more would leave
    // an old standby the controller may never remove (the rollout never finishes).
    const maxUnavailable = resolve(strategy.rollingUpdate?.maxUnavailable, replicas, false);
    assert.equal(replicas - maxUnavailable, 1, `replicas - maxUnavailable`);
    assert.ok(resolve(strategy.rollingUpdate?.maxSurge, replicas, true) >= 1, 'maxSurge ≥ 1');
    assert.ok(
      (deployment.spec!.minReadySeconds ?? 0) >= 10,
      'a pod Ready for a moment (a bad pod that led and crashed) does not count as available',
    );
    const env = Object.fromEntries(
      container.env!.map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath ?? e.value]),
    );
    assert.equal(
      env.POD_TEMPLATE_HASH,
      "metadata.labels['pod-template-hash']",
      'the leader knows its revision, so it yields to a newer one',
    );
  });

  it("settles a newer template's pods longer than liveness takes to kill one that never becomes healthy", () => {
    // A never-healthy pod stays advertised until its liveness kill; were the settle time
    // (newerTemplateSettleSeconds) shorter, the leader would yield to it and the Lease would
    // go there and back (pod chaos seed 3321, 2026-12-02: settle 30 s, liveness 32 s).
    // The manifests' env values, else the library's defaults (its settle at their lease).
    const timings = manifestTimings();
    const settleSeconds = timings.newerTemplateSettleMs / 1000;
    const liveness = container.livenessProbe!;
    const livenessBudgetSeconds =
      (liveness.periodSeconds ?? 10) * (liveness.failureThreshold ?? 3) +
      (liveness.timeoutSeconds ?? 1);
    // The kill's SIGTERM and the withdrawal it writes reach the leader at its next renewal.
    const seenSeconds = (2 * timings.retryPeriodMs) / 1000;
    assert.ok(
      settleSeconds > livenessBudgetSeconds + seenSeconds,
      `settle ${settleSeconds} s > liveness ${livenessBudgetSeconds} s + ${seenSeconds} s`,
    );
  });

  it('has a PodDisruptionBudget that lets the leader (the only healthy pod) be evicted', () => {
    const pdb = only<V1PodDisruptionBudget>(objects, 'PodDisruptionBudget');
    const spec = pdb.spec!;
    assert.equal(spec.unhealthyPodEvictionPolicy, 'AlwaysAllow');
    const desiredHealthy =
      spec.minAvailable !== undefined
        ? resolve(spec.minAvailable, replicas, true)
        : replicas - resolve(spec.maxUnavailable, replicas, true);
    // One Ready pod (the leader): evicting it needs currentHealthy (1) > desiredHealthy.
    assert.ok(
      1 > desiredHealthy,
      `desiredHealthy ${desiredHealthy} would block evicting the leader`,
    );
    assert.deepEqual(spec.selector?.matchLabels, deployment.spec!.selector.matchLabels);
  });

  it('has terminationGracePeriodSeconds longer than the default drain (shutdownGraceMs 10 s)', () => {
    assert.ok((pod.terminationGracePeriodSeconds ?? 30) > 10);
  });

  it('routes the Service to the pods, on the container port', () => {
    const service = only<V1Service>(objects, 'Service');
    const labels = deployment.spec!.template.metadata!.labels!;
    for (const [key, value] of Object.entries(service.spec!.selector!)) {
      assert.equal(labels[key], value, `Service selector ${key}`);
    }
    const portNames = container.ports!.map((p) => p.name);
    for (const port of service.spec!.ports!) assert.ok(portNames.includes(String(port.targetPort)));
  });

  it('is accepted by the real kube-apiserver (server-side apply, dry-run)', async () => {
    const cluster = getTestCluster();
    const admin = kubeConfigFor(cluster);
    // Our own control plane: the demo's namespace, created for real (namespaced objects need
    // it even in a dry-run). An external cluster: the run's namespace, nothing persisted.
    const own = cluster.source === 'control-plane';
    const manifests = loadDemoManifests(own ? {} : { namespace: cluster.namespace });
    const [namespace, ...rest] = manifests;
    assert.equal(namespace!.kind, 'Namespace');
    const applied = [
      ...(await applyManifests(admin, [namespace!], { dryRun: !own })),
      ...(await applyManifests(admin, rest, { dryRun: true })),
    ];
    assert.deepEqual(
      applied.map((a) => `${a.kind}/${a.name}`),
      manifests.map((m) => `${m.kind}/${m.metadata!.name}`),
    );
    // Defaulted by the server, so the dry-run really went through validation and admission.
    const served = applied.find((a) => a.kind === 'Deployment')!.object as V1Deployment;
    assert.equal(
      served.spec?.template.spec?.containers[0]?.terminationMessagePath,
      '/dev/termination-log',
    );
  });

  it('is rejected by the kube-apiserver when it has a typo (the dry-run checks every field)', async () => {
    const cluster = getTestCluster();
    const dir = mkdtempSync(join(tmpdir(), 'nest-leader-deploy-typo-'));
    try {
      cpSync(DEMO_DEPLOY_DIR, dir, { recursive: true });
      const file = join(dir, 'deployment.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('readinessProbe:', 'readinesProbe:'));
      const deploymentWithTypo = loadDemoManifests({ dir, namespace: cluster.namespace }).filter(
        (o) => o.kind === 'Deployment',
      );
      await assert.rejects(
        applyManifests(kubeConfigFor(cluster), deploymentWithTypo, { dryRun: true }),
        // Server-side apply's wording for an unknown field.
        /applying Deployment .* failed: .*readinesProbe: field not declared in schema/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
