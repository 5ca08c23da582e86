/**
 * The demo's Kubernetes manifests (apps/demo/deploy) as objects, with the subset of kustomize
 * that deploy/kustomization.yaml uses (namespace, labels, images) applied, and a way to
 * server-side apply them. The launcher applies the RBAC part to its control plane; the tests
 * apply everything (dry-run) so a typo fails CI. Framework-free.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  HttpMethod,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
} from '@kubernetes/client-node';
import { parseAllYaml, parseYaml } from './raw-yaml.js';

/** apps/demo/deploy (this file runs from apps/demo/dist/launcher). */
export const DEMO_DEPLOY_DIR = fileURLToPath(new URL('../../deploy/', import.meta.url));

/** Names used by the manifests. */
export const DEMO_NAMESPACE = 'nest-leader-demo';
export const DEMO_SERVICE_ACCOUNT = 'nest-leader-demo';

/** Field manager for server-side apply. */
const FIELD_MANAGER = 'nest-leader-demo';

interface Kustomization {
  namespace?: string;
  resources?: string[];
  labels?: { pairs: Record<string, string>; includeSelectors?: boolean }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  [other: string]: unknown;
}

const SUPPORTED_KUSTOMIZE_FIELDS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'labels',
  'images',
]);

/**
 * Cluster-scoped kinds among the manifests (besides the Namespace): kustomize's namespace
 * transformer does not know them and stamps them anyway (kubectl then ignores it), so this
 * reader leaves their metadata without a namespace, as the API server stores them.
 */
const CLUSTER_SCOPED_KINDS = new Set([
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

/** Options of {@link loadDemoManifests}. */
export interface LoadManifestsOptions {
  /** Namespace for every namespaced object instead of the kustomization's. */
  namespace?: string;
  /**
   * Appended to every object's name (not the Namespace's), references included (roleRef,
   * ServiceAccount subjects, serviceAccountName): several copies can live in one namespace.
   */
  nameSuffix?: string;
  /** Keep only these kinds, e.g. `['ServiceAccount', 'Role', 'RoleBinding']`. */
  kinds?: readonly string[];
  /**
   * The Lease the replicas elect on, when not the deployment's `LEASE_NAME`: `LEASE_NAME` is set
   * to it (the Role names no Lease: it covers the namespace's Leases, see deploy/role.yaml).
   */
  leaseName?: string;
  /** The deploy directory; default {@link DEMO_DEPLOY_DIR}. */
  dir?: string;
}

/** A manifest object with the fields the transformations touch. */
type Manifest = KubernetesObject & {
  metadata: NonNullable<KubernetesObject['metadata']>;
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  spec?: {
    /** A ValidatingAdmissionPolicyBinding's policy. */
    policyName?: string;
    template?: {
      spec?: {
        serviceAccountName?: string;
        containers?: { image?: string; env?: { name: string; value?: string }[] }[];
      };
    };
  };
};

/**
 * Reads deploy/kustomization.yaml and the resources it lists, and applies its namespace,
 * labels and images as `kubectl apply -k` would, in the listed order (Namespace first).
 * @throws Error if the kustomization uses a field this reader does not implement.
 */
export function loadDemoManifests(options: LoadManifestsOptions = {}): KubernetesObject[] {
  const dir = options.dir ?? DEMO_DEPLOY_DIR;
  const kustomization = parseYaml<Kustomization>(
    readFileSync(join(dir, 'kustomization.yaml'), 'utf8'),
  );
  const unsupported = Object.keys(kustomization).filter((k) => !SUPPORTED_KUSTOMIZE_FIELDS.has(k));
  if (unsupported.length > 0) {
    throw new Error(
      `deploy/kustomization.yaml uses ${unsupported.join(', ')}: teach demo-manifests.ts to apply it`,
    );
  }
  const namespace = options.namespace ?? kustomization.namespace;
  const suffix = options.nameSuffix ?? '';
  let objects = (kustomization.resources ?? []).flatMap((file) =>
    parseAllYaml<Manifest>(readFileSync(join(dir, file), 'utf8')),
  );
  const serviceAccounts = new Set(
    objects.filter((o) => o.kind === 'ServiceAccount').map((o) => o.metadata.name),
  );
  const roles = new Set(objects.filter((o) => o.kind === 'Role').map((o) => o.metadata.name));

  for (const object of objects) {
    const meta = object.metadata;
    if (object.kind === 'Namespace') {
      if (namespace) meta.name = namespace;
    } else if (CLUSTER_SCOPED_KINDS.has(object.kind!)) {
      meta.name = `${meta.name}${suffix}`;
      if (object.spec?.policyName) object.spec.policyName += suffix;
    } else {
      if (namespace) meta.namespace = namespace;
      meta.name = `${meta.name}${suffix}`;
    }
    for (const { pairs } of kustomization.labels ?? []) {
      meta.labels = { ...meta.labels, ...pairs };
    }
    if (object.roleRef?.kind === 'Role' && roles.has(object.roleRef.name)) {
      object.roleRef.name += suffix;
    }
    for (const subject of object.subjects ?? []) {
      if (subject.kind === 'ServiceAccount' && serviceAccounts.has(subject.name)) {
        subject.name += suffix;
        if (namespace) subject.namespace = namespace;
      }
    }
    const pod = object.spec?.template?.spec;
    if (pod?.serviceAccountName && serviceAccounts.has(pod.serviceAccountName)) {
      pod.serviceAccountName += suffix;
    }
    for (const container of pod?.containers ?? []) {
      for (const variable of container.env ?? []) {
        if (options.leaseName && variable.name === 'LEASE_NAME') variable.value = options.leaseName;
      }
      for (const image of kustomization.images ?? []) {
        if (container.image === image.name || container.image?.startsWith(`${image.name}:`)) {
          container.image = `${image.newName ?? image.name}${image.newTag ? `:${image.newTag}` : ''}`;
        }
      }
    }
  }
  if (options.kinds) objects = objects.filter((o) => options.kinds!.includes(o.kind!));
  return objects;
}

/** The result of applying one object. */
export interface AppliedObject {
  kind: string;
  namespace?: string;
  name: string;
  /** The object as the server returned it (defaulted; not persisted in a dry-run). */
  object: KubernetesObject;
}

/**
 * `KubernetesObjectApi` with a server-side apply that sends the object as given. Its own
 * `patch()` serializes through the typed models, which drop unknown fields, and it cannot ask
 * for strict field validation; `kubectl apply --server-side` does both.
 */
class StrictApplyApi extends KubernetesObjectApi {
  static forConfig(kubeConfig: KubeConfig): StrictApplyApi {
    const api = kubeConfig.makeApiClient(StrictApplyApi);
    api.setDefaultNamespace(kubeConfig);
    return api;
  }

  async apply(object: KubernetesObject, dryRun: boolean): Promise<KubernetesObject> {
    const path = await this.specUriPath(object, 'patch');
    const request = this.configuration.baseServer.makeRequestContext(path, HttpMethod.PATCH);
    request.setHeaderParam('Accept', 'application/json');
    request.setHeaderParam('Content-Type', PatchStrategy.ServerSideApply);
    request.setQueryParam('fieldManager', FIELD_MANAGER);
    request.setQueryParam('force', 'true');
    // Unknown or duplicate fields are errors, not warnings: a typo fails the apply.
    request.setQueryParam('fieldValidation', 'Strict');
    if (dryRun) request.setQueryParam('dryRun', 'All');
    request.setBody(JSON.stringify(object));
    return this.requestPromise(request);
  }
}

/**
 * Server-side applies `objects` in order, as `kubectl apply --server-side
 * --validate=strict` would: every field is sent, and the server's schema validation,
 * defaulting and admission run; unknown fields are rejected.
 * @param dryRun - validate only (`dryRun=All`), persist nothing.
 * @throws Error naming the object and quoting the server's message, on the first failure.
 */
export async function applyManifests(
  kubeConfig: KubeConfig,
  objects: readonly KubernetesObject[],
  options: { dryRun?: boolean } = {},
): Promise<AppliedObject[]> {
  const api = StrictApplyApi.forConfig(kubeConfig);
  const applied: AppliedObject[] = [];
  for (const object of objects) {
    const what = `${object.kind} ${object.metadata?.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata?.name}`;
    try {
      const result = await api.apply(object, options.dryRun ?? false);
      applied.push({
        kind: object.kind!,
        namespace: result.metadata?.namespace,
        name: result.metadata!.name!,
        object: result,
      });
    } catch (error) {
      const body = (error as { body?: unknown }).body;
      let detail = '';
      try {
        detail = (JSON.parse(String(body)) as { message?: string }).message ?? '';
      } catch {
        // keep the error's own message
      }
      throw new Error(`applying ${what} failed: ${detail || (error as Error).message}`, {
        cause: error,
      });
    }
  }
  return applied;
}
