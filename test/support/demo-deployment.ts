/**
 * The demo's Deployment on the node cluster, as the cluster tier and `pnpm bench rollout` see
 * it: its pods, its Lease, whether a rollout is done, and a rollout measured from the Lease
 * (holders, leaseTransitions, leaderless time). Reads go through `kubectl … -o json`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Deployment, V1Lease, V1PodList } from '@kubernetes/client-node';
import type { NodeCluster } from '@nest-leader/demo/launcher/node-cluster';

/** One pod of the Deployment. */
export interface PodView {
  name: string;
  ip: string | undefined;
  ready: boolean;
  restarts: number;
  /** The app container is running (not waiting, not terminated). */
  running: boolean;
  /** The app container's ID in containerd (without `containerd://`). */
  containerId: string | undefined;
  /** Its `nest-leader/role` label: `leader` or `standby`. */
  role: string | undefined;
  /** It has a deletionTimestamp (SIGTERMed, draining). */
  terminating: boolean;
  /** Its `pod-template-hash` label: the Deployment revision it runs. */
  templateHash: string | undefined;
  /** Its `metadata.creationTimestamp` (ISO 8601, whole seconds). */
  createdAt: string | undefined;
  /** Why the app container waits, if it does (`ErrImagePull`, `CrashLoopBackOff`, …). */
  waitingReason: string | undefined;
}

/** The Lease's spec fields the tier reads. */
export interface LeaseView {
  holderIdentity: string;
  leaseTransitions: number;
  renewTime: string;
  /** The pod template hashes in the annotation `nest-leader/candidates` (advertised candidates). */
  advertisedTemplates: string[];
}

/** One read of the Lease and then of the pods, as {@link DemoDeployment.watchLease} takes it. */
export interface LeaseSample {
  lease: LeaseView;
  pods: PodView[];
}

/** What the Lease did from a rollout's start until it was done (see {@link DemoDeployment.watchLease}). */
export interface LeaseWatchFigures {
  /** Holders in order, the first being the holder when the watch began. */
  holders: string[];
  /** leaseTransitions at the end minus at the start. */
  transitions: number;
  /**
   * Time, ms, the Lease was released, held by a pod that is gone, or by a terminating pod no
   * longer labelled `nest-leader/role=leader` (its term ended: draining or handing off).
   */
  leaderlessMs: number;
  /** The watch's length, ms. */
  elapsedMs: number;
  /**
   * Reads of the Lease and pods taken, and the longest time between two, ms: the resolution
   * of `leaderlessMs` (a failed read fails the watch, none is dropped).
   */
  samples: number;
  maxSampleGapMs: number;
}

export class DemoDeployment {
  /**
   * @param namespace - the Deployment's namespace; the Deployment, its Service and the Lease
   *   are all named like it (the demo's manifests)
   * @param selector - label selector of its pods
   * @param container - the app container's name
   */
  constructor(
    readonly cluster: NodeCluster,
    readonly namespace: string,
    readonly selector: string,
    readonly container: string,
  ) {}

  async pods(): Promise<PodView[]> {
    const list = await this.cluster.getJson<V1PodList>(
      'get',
      'pods',
      '-n',
      this.namespace,
      '-l',
      this.selector,
    );
    return list.items.map((pod) => {
      const status = pod.status?.containerStatuses?.find((s) => s.name === this.container);
      return {
        name: pod.metadata!.name!,
        ip: pod.status?.podIP,
        ready:
          pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
        restarts: status?.restartCount ?? 0,
        running: status?.state?.running !== undefined,
        containerId: status?.containerID?.replace(/^containerd:\/\//, ''),
        role: pod.metadata!.labels?.['nest-leader/role'],
        terminating: Boolean(pod.metadata!.deletionTimestamp),
        templateHash: pod.metadata!.labels?.['pod-template-hash'],
        createdAt: pod.metadata!.creationTimestamp
          ? new Date(pod.metadata!.creationTimestamp).toISOString()
          : undefined,
        waitingReason: status?.state?.waiting?.reason,
      };
    });
  }

  /** Pods that are not terminating. */
  async livePods(): Promise<PodView[]> {
    return (await this.pods()).filter((p) => !p.terminating);
  }

  /**
   * Evicts `pod` through the Eviction API (policy/v1), as a node drain does: subject to the
   * PodDisruptionBudget, then a graceful deletion.
   * @throws Error (kubectl's output) when the API refuses it, e.g. 429 under the budget.
   */
  async evict(pod: string): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'eviction-'));
    try {
      const file = join(dir, 'eviction.json');
      writeFileSync(
        file,
        JSON.stringify({
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: pod, namespace: this.namespace },
        }),
      );
      await this.cluster.kubectl(
        'create',
        '--raw',
        `/api/v1/namespaces/${this.namespace}/pods/${pod}/eviction`,
        '-f',
        file,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async leaseSpec(): Promise<LeaseView> {
    const lease = await this.cluster.getJson<V1Lease>(
      'get',
      'lease',
      this.namespace,
      '-n',
      this.namespace,
    );
    const spec = lease.spec ?? {};
    return {
      holderIdentity: spec.holderIdentity ?? '',
      leaseTransitions: spec.leaseTransitions ?? 0,
      renewTime: String(spec.renewTime ?? ''),
      advertisedTemplates: advertisedTemplates(
        lease.metadata?.annotations?.['nest-leader/candidates'],
      ),
    };
  }

  /** The Deployment's current revision (annotation `deployment.kubernetes.io/revision`). */
  async revision(): Promise<string> {
    const revision = (await this.deployment()).metadata?.annotations?.[
      'deployment.kubernetes.io/revision'
    ];
    if (!revision) throw new Error(`deployment/${this.namespace} has no revision yet`);
    return revision;
  }

  /** Applies JSON-patch operations to the Deployment (a new pod template: a rollout). */
  async patch(operations: readonly object[]): Promise<void> {
    await this.cluster.kubectl(
      'patch',
      'deployment',
      this.namespace,
      '-n',
      this.namespace,
      '--type=json',
      '-p',
      JSON.stringify(operations),
    );
  }

  async deployment(): Promise<V1Deployment> {
    return this.cluster.getJson<V1Deployment>(
      'get',
      'deployment',
      this.namespace,
      '-n',
      this.namespace,
    );
  }

  /** The Deployment's controller caught up: every replica updated and no pod terminating. */
  async rolloutDone(): Promise<boolean> {
    const d = await this.deployment();
    const s = d.status ?? {};
    const replicas = d.spec!.replicas;
    return (
      (s.observedGeneration ?? 0) >= (d.metadata!.generation ?? 0) &&
      s.updatedReplicas === replicas &&
      s.replicas === replicas &&
      (await this.livePods()).length === replicas
    );
  }

  /** Waits until the rollout is done and a live, Ready pod holds the Lease. */
  async settled(timeoutMs = 300_000): Promise<void> {
    const started = performance.now();
    for (;;) {
      const { holderIdentity } = await this.leaseSpec();
      const leader = (await this.livePods()).find((p) => p.name === holderIdentity);
      if ((await this.rolloutDone()) && leader?.ready) return;
      if (performance.now() - started > timeoutMs) {
        throw new Error(`not settled within ${timeoutMs} ms (holder ${holderIdentity})`);
      }
      await sleep(500);
    }
  }

  /**
   * Samples the Lease and the pods every 100 ms (plus the two kubectl calls' time) until
   * `until` says stop on a sample in which a live pod holds the Lease, or `timeoutMs` passed.
   * `until` judges that sample itself, never a later read of the Lease: the figures (holders,
   * transitions) come from the samples, so a handover seen only by a later read would end the
   * watch with figures that never saw it.
   */
  async watchLease(
    until: (sample: LeaseSample) => Promise<boolean>,
    timeoutMs: number,
  ): Promise<LeaseWatchFigures> {
    const started = performance.now();
    let last = await this.leaseSpec();
    const holders = [last.holderIdentity];
    const firstTransitions = last.leaseTransitions;
    let leaderlessMs = 0;
    let leaderlessSince: number | undefined;
    let samples = 0;
    let maxSampleGapMs = 0;
    let lastSampleAt = started;
    while (performance.now() - started < timeoutMs) {
      const now = performance.now();
      const spec = await this.leaseSpec();
      const pods = await this.pods();
      const holder = pods.find((p) => p.name === spec.holderIdentity);
      samples += 1;
      maxSampleGapMs = Math.max(maxSampleGapMs, now - lastSampleAt);
      lastSampleAt = now;
      // Leaderless: released (empty holder), held by a pod that is gone, or by one that is
      // terminating and no longer labelled leader (a terminating pod that still leads — as a
      // leader waiting for a rollout's new pods to hand off to — is not leaderless).
      const leaderless = holder === undefined || (holder.terminating && holder.role !== 'leader');
      if (leaderless && leaderlessSince === undefined) leaderlessSince = now;
      if (!leaderless && leaderlessSince !== undefined) {
        leaderlessMs += now - leaderlessSince;
        leaderlessSince = undefined;
      }
      if (spec.holderIdentity !== '' && spec.holderIdentity !== holders.at(-1))
        holders.push(spec.holderIdentity);
      last = spec;
      if (!leaderless && (await until({ lease: spec, pods }))) break;
      await sleep(100);
    }
    return {
      holders,
      transitions: last.leaseTransitions - firstTransitions,
      leaderlessMs: Math.round(leaderlessMs),
      elapsedMs: Math.round(performance.now() - started),
      samples,
      maxSampleGapMs: Math.round(maxSampleGapMs),
    };
  }

  /**
   * `kubectl rollout restart`, watched until every old pod is gone, the rollout is done and a
   * live pod is Ready and holds the Lease (or progressDeadlineSeconds passed: compare
   * `elapsedMs` with `progressDeadlineMs`).
   */
  async rolloutRestart(): Promise<LeaseWatchFigures & { progressDeadlineMs: number }> {
    const progressDeadlineMs = (await this.deployment()).spec!.progressDeadlineSeconds! * 1000;
    const oldPods = new Set((await this.pods()).map((p) => p.name));
    await this.cluster.kubectl(
      'rollout',
      'restart',
      `deployment/${this.namespace}`,
      '-n',
      this.namespace,
    );
    const figures = await this.watchLease(async ({ lease, pods }) => {
      const live = pods.filter((p) => !p.terminating);
      // A live pod holds the Lease: not a terminating old leader that still leads on while it
      // waits to hand over (with label routing every new pod is Ready before that handover).
      return (
        live.every((p) => !oldPods.has(p.name)) &&
        live.some((p) => p.ready && p.name === lease.holderIdentity) &&
        (await this.rolloutDone())
      );
    }, progressDeadlineMs);
    return { ...figures, progressDeadlineMs };
  }
}

/** The `podTemplateHash` values of an `nest-leader/candidates` annotation (unparseable: none). */
function advertisedTemplates(annotation: string | undefined): string[] {
  try {
    const entries = JSON.parse(annotation ?? '[]') as { podTemplateHash?: unknown }[];
    return entries
      .map((e) => e.podTemplateHash)
      .filter((hash): hash is string => typeof hash === 'string');
  } catch {
    return [];
  }
}
