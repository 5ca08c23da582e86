/**
 * RBAC helpers: grant a test identity exactly the verbs it should have on Leases.
 */
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { kubeConfigFor } from './cluster.js';
import type { ClusterInfo } from './control-plane.js';

/**
 * Verbs the elector uses on `leases.coordination.k8s.io` (as the demo's Role): `watch` lets
 * followers watch the Lease instead of polling it.
 */
export const ELECTOR_VERBS = ['get', 'create', 'update', 'watch'] as const;

/**
 * Creates (or replaces) Role `<identity>-leases` with `verbs` on Leases in the cluster's test
 * namespace and binds it to the identity's user.
 */
export async function grantLeaseAccess(
  cluster: ClusterInfo,
  identity: string,
  verbs: readonly string[] = ELECTOR_VERBS,
): Promise<void> {
  await grantRules(cluster, identity, 'leases', [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...verbs] },
  ]);
}

/** One rule of a Role. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** The rule the Events observers need: create `events.k8s.io` Events. */
export const EVENTS_CREATE_RULE: PolicyRule = {
  apiGroups: ['events.k8s.io'],
  resources: ['events'],
  verbs: ['create'],
};

/**
 * Creates (or replaces) Role `<identity>-<suffix>` with `rules` in the cluster's test namespace
 * and binds it to the identity's user.
 */
export async function grantRules(
  cluster: ClusterInfo,
  identity: string,
  suffix: string,
  rules: readonly PolicyRule[],
): Promise<void> {
  const rbac = kubeConfigFor(cluster).makeApiClient(RbacAuthorizationV1Api);
  const namespace = cluster.namespace;
  const name = `${identity}-${suffix}`;
  const username = cluster.identities[identity]!.username;
  const role = { metadata: { name, namespace }, rules: rules.map((r) => ({ ...r })) };
  const binding = {
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: username }],
  };
  await upsert(
    () => rbac.createNamespacedRole({ namespace, body: role }),
    () => rbac.replaceNamespacedRole({ name, namespace, body: role }),
  );
  await upsert(
    () => rbac.createNamespacedRoleBinding({ namespace, body: binding }),
    () => rbac.replaceNamespacedRoleBinding({ name, namespace, body: binding }),
  );
}

/** Removes what {@link grantRules} created (ignores NotFound). */
export async function revokeRules(
  cluster: ClusterInfo,
  identity: string,
  suffix: string,
): Promise<void> {
  const rbac = kubeConfigFor(cluster).makeApiClient(RbacAuthorizationV1Api);
  const namespace = cluster.namespace;
  const name = `${identity}-${suffix}`;
  await ignoreNotFound(() => rbac.deleteNamespacedRoleBinding({ name, namespace }));
  await ignoreNotFound(() => rbac.deleteNamespacedRole({ name, namespace }));
}

/** Removes what {@link grantLeaseAccess} created (ignores NotFound). */
export async function revokeLeaseAccess(cluster: ClusterInfo, identity: string): Promise<void> {
  await revokeRules(cluster, identity, 'leases');
}

async function upsert(create: () => Promise<unknown>, replace: () => Promise<unknown>) {
  try {
    await create();
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
    await replace();
  }
}

async function ignoreNotFound(call: () => Promise<unknown>) {
  try {
    await call();
  } catch (err) {
    if ((err as { code?: number }).code !== 404) throw err;
  }
}

/** Verbs the ConfigMap lock needs on `configmaps` (core group): as on Leases. */
export const CONFIGMAP_ELECTOR_VERBS = ELECTOR_VERBS;

/**
 * Creates (or replaces) Role `<identity>-configmaps` with `verbs` on ConfigMaps in the test
 * namespace and binds it to the identity's user.
 */
export async function grantConfigMapAccess(
  cluster: ClusterInfo,
  identity: string,
  verbs: readonly string[] = CONFIGMAP_ELECTOR_VERBS,
): Promise<void> {
  await grantRules(cluster, identity, 'configmaps', [
    { apiGroups: [''], resources: ['configmaps'], verbs: [...verbs] },
  ]);
}

/** Removes what {@link grantConfigMapAccess} created (ignores NotFound). */
export async function revokeConfigMapAccess(cluster: ClusterInfo, identity: string): Promise<void> {
  await revokeRules(cluster, identity, 'configmaps');
}
