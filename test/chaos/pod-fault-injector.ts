/**
 * Applies one pod-level fault of `pnpm chaos --cluster` ({@link POD_FAULT_SPECS}) to the demo's
 * pods on the node cluster: through kubectl (deletions, evictions) and containerd (kills), as
 * a cluster's own controllers and a node's runtime would.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { preferredCandidate } from 'nest-leader/core';
import {
  type BadTemplate,
  badDeployWatch,
  undoBadDeploy,
  watchBadDeploy,
} from '../support/bad-deploy.js';
import { killContainer, setContainerFrozen, setEgressDrop } from '../support/containerd.js';
import type { DemoDeployment, PodView } from '../support/demo-deployment.js';
import { eventually } from '../support/eventually.js';
import {
  apiServerClusterIp,
  restartNodeComponent,
  setNodeComponentPaused,
  waitForApiServerFromPods,
} from '../support/node-components.js';
import type { PodLogCollector } from '../support/pod-log-collector.js';
import { advertisedCandidates } from '../support/pod-ghosts.js';
import { restartOldLeaderAfterNewPods } from '../support/rollout-wedge.js';
import {
  apiStallMs,
  POD_MEASUREMENTS,
  type PodChaosTimings,
  type PodFaultKind,
} from './pod-fault-kinds.js';

/** The candidate a stop of `leader` would hand to, by the advertisements on the Lease. */
async function preferredFollower(
  demo: DemoDeployment,
  leader: string,
): Promise<string | undefined> {
  return preferredCandidate(await advertisedCandidates(demo), leader)?.identity;
}

/** What applying a fault did, beyond the leader it targeted. */
export interface AppliedPodFault {
  /** The follower killed and force-deleted (`ghost-then-delete`). */
  ghost?: string;
  /** Things that went wrong applying it (become `round-problem` violations). */
  notes: string[];
  /** Figures the round measured ({@link POD_MEASUREMENTS}): some bounds depend on them. */
  measurements: Record<string, number>;
}

/** How long a ghost's replacement pod may take to run before the leader is deleted anyway, ms. */
const REPLACEMENT_TIMEOUT_MS = 120_000;

/** What a fault needs besides its kind. */
export interface PodFaultContext {
  demo: DemoDeployment;
  /** A live pod holding the Lease, working in term `token`. */
  leader: PodView;
  token: number;
  /** Chooses among followers (seeded, so a seed replays the same choices): [0, 1). */
  pick: () => number;
  /** How long to watch for a transition after a fault that must not cause one, ms. */
  watchMs: number;
  /** How long a frozen container stays frozen, and a partition at least, ms. */
  pastLeaseMs: number;
  /** Resolves once a pod works in a term after `token`; rejects after the round's timeout. */
  nextTerm: (token: number) => Promise<unknown>;
  /** The pods' election timings (the shipped manifests'). */
  timings: PodChaosTimings;
  /** When `pod` first logged `replica-started` at or after `afterMs` (wall ms), if it did yet. */
  replicaStartedAt: (pod: string, afterMs: number) => number | undefined;
  /** The pods' log lines so far (a bad deploy reads the leader's). */
  logs: PodLogCollector;
}

/** The bad template of each bad-deploy fault (`test/support/bad-deploy.ts`). */
const BAD_DEPLOYS: Partial<Record<PodFaultKind, BadTemplate>> = {
  'bad-deploy-unpullable': 'an image that cannot be pulled',
  'bad-deploy-crashloop': 'pods that crash after they advertise',
  'bad-deploy-unhealthy': 'pods that never become healthy',
};

/**
 * Turns the follower the leader would hand to (the preferred advertisement on the Lease; the
 * seeded pick when none is) into a ghost: its container SIGKILLed and its pod force-deleted,
 * so nothing withdraws its advertisement; resolves once its replacement runs.
 * @returns the ghost's pod name, or undefined (with a note) when no follower runs
 */
async function makeGhost(
  demo: DemoDeployment,
  leader: PodView,
  pick: () => number,
  notes: string[],
): Promise<string | undefined> {
  const followers = (await demo.livePods()).filter(
    (p) => p.name !== leader.name && p.running && p.containerId,
  );
  if (followers.length === 0) {
    notes.push('no running follower to turn into a ghost');
    return undefined;
  }
  const preferred = await preferredFollower(demo, leader.name);
  const ghost =
    followers.find((p) => p.name === preferred) ??
    followers[Math.floor(pick() * followers.length)]!;
  // Pods there before the kill: the ReplicaSet's replacement is the pod not among them.
  const before = new Set((await demo.pods()).map((p) => p.name));
  // No stop path: the container dies at once, then the pod object goes without waiting for
  // the kubelet, so nothing withdraws its advertisement from the Lease.
  await killContainer(demo.cluster, ghost.containerId!);
  await demo.cluster.kubectl(
    'delete',
    'pod',
    ghost.name,
    '-n',
    demo.namespace,
    '--grace-period=0',
    '--force',
  );
  await eventually(
    async () => {
      const fresh = (await demo.livePods()).filter((p) => !before.has(p.name) && p.running);
      assert.ok(fresh.length > 0, `a replacement for ${ghost.name} runs`);
    },
    { timeoutMs: REPLACEMENT_TIMEOUT_MS, intervalMs: 500 },
  ).catch(() =>
    notes.push(`no replacement for ${ghost.name} ran within ${REPLACEMENT_TIMEOUT_MS / 1000} s`),
  );
  return ghost.name;
}

/** Applies `kind` to the context's leader pod. */
export async function applyPodFault(
  kind: PodFaultKind,
  context: PodFaultContext,
): Promise<AppliedPodFault> {
  const { demo, leader, token, pick, watchMs, pastLeaseMs: frozenMs, timings } = context;
  const notes: string[] = [];
  const measurements: Record<string, number> = {};
  const { cluster, namespace } = demo;
  const deleteGracefully = (pod: string) =>
    cluster.kubectl('delete', 'pod', pod, '-n', namespace, '--wait=false');
  switch (kind) {
    case 'pod-delete':
      await deleteGracefully(leader.name);
      return { notes, measurements };
    case 'pod-evict':
      await demo.evict(leader.name);
      return { notes, measurements };
    case 'container-kill':
      assert.ok(leader.containerId, `the leader ${leader.name} has a container`);
      await killContainer(cluster, leader.containerId);
      return { notes, measurements };
    case 'ghost-then-delete': {
      // The ghost is the follower the leader would hand to: the mess at its worst.
      const ghost = await makeGhost(demo, leader, pick, notes);
      await deleteGracefully(leader.name);
      return { ghost, notes, measurements };
    }
    case 'container-freeze': {
      assert.ok(leader.containerId, `the leader ${leader.name} has a container`);
      setContainerFrozen(leader.containerId, true);
      try {
        await sleep(frozenMs);
      } finally {
        setContainerFrozen(leader.containerId, false);
      }
      return { notes, measurements };
    }
    case 'partition': {
      assert.ok(leader.containerId, `the leader ${leader.name} has a container`);
      const apiServer = await apiServerClusterIp(cluster);
      const startedAt = performance.now();
      await setEgressDrop(cluster, leader.containerId, apiServer, true);
      try {
        await context
          .nextTerm(token)
          .catch(() => notes.push('no pod took over during the partition'));
        await sleep(Math.max(250, frozenMs - (performance.now() - startedAt)));
      } finally {
        await setEgressDrop(cluster, leader.containerId, apiServer, false);
      }
      return { notes, measurements };
    }
    case 'kubelet-restart':
    case 'containerd-restart': {
      const restartsBefore = new Map((await demo.pods()).map((p) => [p.name, p.restarts]));
      await restartNodeComponent(cluster, kind === 'kubelet-restart' ? 'kubelet' : 'containerd');
      await sleep(watchMs);
      const restarted = (await demo.pods()).filter(
        (p) => restartsBefore.has(p.name) && p.restarts !== restartsBefore.get(p.name),
      );
      measurements[POD_MEASUREMENTS.containerRestarts] = restarted.length;
      return { notes, measurements };
    }
    case 'apiserver-stall': {
      const stallStartAt = Date.now();
      const startedAt = performance.now();
      setNodeComponentPaused(cluster, 'control-plane', true);
      try {
        await sleep(apiStallMs(timings));
      } finally {
        setNodeComponentPaused(cluster, 'control-plane', false);
      }
      measurements[POD_MEASUREMENTS.stallMs] = Math.round(performance.now() - startedAt);
      measurements[POD_MEASUREMENTS.stallStartAt] = stallStartAt;
      return { notes, measurements };
    }
    case 'rollout-during-failover': {
      assert.ok(leader.containerId, `the leader ${leader.name} has a container`);
      const before = new Set((await demo.pods()).map((p) => p.name));
      const killAt = Date.now();
      await killContainer(cluster, leader.containerId);
      await rolloutRestart(demo);
      const fresh = async () =>
        (await demo.pods()).map((p) => p.name).filter((name) => !before.has(name));
      await recordFirstUp(fresh, killAt, 'pod of the new template', context, measurements, notes);
      return { notes, measurements };
    }
    case 'rollout-then-leader-kill': {
      const before = new Set((await demo.pods()).map((p) => p.name));
      await rolloutRestart(demo);
      try {
        const { killAt, holder } = await restartOldLeaderAfterNewPods(
          demo,
          leader,
          before,
          token,
          REPLACEMENT_TIMEOUT_MS,
        );
        if (holder !== leader.name) notes.push(`${holder}, not the restarted container, took over`);
        const restarted = () => [leader.name];
        await recordFirstUp(restarted, killAt, 'restarted container', context, measurements, notes);
      } catch (error) {
        notes.push(`rollout-then-leader-kill: ${(error as Error).message}`);
      }
      return { notes, measurements };
    }
    case 'cluster-restart': {
      // As a power loss: every app container dies at once, without its stop path; then the
      // node's components restart, the API server on its kept etcd data (the Lease's history).
      const pods = await demo.pods();
      const clusterIp = await apiServerClusterIp(cluster);
      const killAt = Date.now();
      for (const p of pods) {
        if (!p.containerId) continue;
        await killContainer(cluster, p.containerId).catch((error: unknown) =>
          notes.push(`could not kill ${p.name}'s container: ${(error as Error).message}`),
        );
      }
      for (const component of ['control-plane', 'containerd', 'kubelet'] as const) {
        await restartNodeComponent(cluster, component, 60_000);
      }
      // Nobody can read the Lease before the API server answers the pods again (through the
      // ClusterIP, as they reach it): bounds count from it too.
      await waitForApiServerFromPods(cluster, clusterIp, REPLACEMENT_TIMEOUT_MS).then(
        () => (measurements[POD_MEASUREMENTS.apiReadyMs] = Date.now() - killAt),
        (error: Error) => notes.push(error.message),
      );
      const names = pods.map((p) => p.name);
      await recordFirstUp(() => names, killAt, 'container', context, measurements, notes);
      return { notes, measurements };
    }
    case 'rollout-stale-entry': {
      const ghost = await makeGhost(demo, leader, pick, notes);
      await rolloutRestart(demo);
      return { ghost, notes, measurements };
    }
    case 'bad-deploy-unpullable':
    case 'bad-deploy-crashloop':
    case 'bad-deploy-unhealthy': {
      // The template patched, watched as the cluster tier does, then undone: the leader and its
      // work judged by the checker (no transition, `work-paused`), the rest noted here.
      const template = BAD_DEPLOYS[kind]!;
      const goodRevision = await demo.revision();
      try {
        const figures = await watchBadDeploy(
          demo,
          context.logs,
          template,
          badDeployWatch(template, timings),
        );
        measurements[POD_MEASUREMENTS.badDeployWatchMs] = figures.observedMs;
        if (figures.settledAfterFailureMs !== undefined) {
          measurements[POD_MEASUREMENTS.settledAfterFailureMs] = figures.settledAfterFailureMs;
        }
        if (figures.everReady.length > 0 && template !== 'pods that crash after they advertise') {
          notes.push(`${kind}: bad pods were Ready: ${figures.everReady.join(', ')}`);
        }
      } catch (error) {
        notes.push(`${kind}: ${(error as Error).message}`);
      } finally {
        await undoBadDeploy(demo, goodRevision, leader.templateHash).catch((error: unknown) =>
          notes.push(`${kind}: ${(error as Error).message}`),
        );
      }
      return { notes, measurements };
    }
    case 'unsafe-intruder':
      throw new Error(
        'unsafe-intruder is the positive control (pod-positive-control.ts), not a fault',
      );
    case 'scale-unstarted': {
      const replicas = (await demo.deployment()).spec!.replicas!;
      const scale = (n: number) =>
        cluster.kubectl('scale', `deployment/${namespace}`, '-n', namespace, `--replicas=${n}`);
      const before = new Set((await demo.pods()).map((p) => p.name));
      await scale(replicas + 2);
      await eventually(
        async () => {
          const fresh = (await demo.pods()).filter((p) => !before.has(p.name));
          assert.equal(fresh.length, 2, 'the two new pods exist');
          return fresh;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      ).then(
        (fresh) => {
          const started = fresh.filter((p) => p.running);
          if (started.length > 0)
            notes.push(`scaled down after ${started.map((p) => p.name).join(', ')} started`);
        },
        () => notes.push('the two new pods did not appear within 30 s'),
      );
      await scale(replicas);
      await eventually(async () => assert.equal((await demo.pods()).length, replicas), {
        timeoutMs: 120_000,
        intervalMs: 500,
      }).catch(() => notes.push(`not back to ${replicas} pods within 120 s`));
      await sleep(watchMs);
      return { notes, measurements };
    }
  }
}

/**
 * Waits until one of `pods()` logs `replica-started` after `killAt` and records how long that
 * took (`newPodUpMs`: bounds count from it), or notes that none did in time.
 */
async function recordFirstUp(
  pods: () => string[] | Promise<string[]>,
  killAt: number,
  what: string,
  context: PodFaultContext,
  measurements: Record<string, number>,
  notes: string[],
): Promise<void> {
  await eventually(
    async () => {
      const up = (await pods())
        .map((name) => context.replicaStartedAt(name, killAt))
        .filter((at): at is number => at !== undefined);
      assert.ok(up.length > 0, `a ${what} is up`);
      measurements[POD_MEASUREMENTS.newPodUpMs] = Math.min(...up) - killAt;
    },
    { timeoutMs: REPLACEMENT_TIMEOUT_MS, intervalMs: 250 },
  ).catch(() => notes.push(`no ${what} was up within ${REPLACEMENT_TIMEOUT_MS / 1000} s`));
}

/** `kubectl rollout restart` of the demo's Deployment (a new template: every pod replaced). */
async function rolloutRestart(demo: DemoDeployment): Promise<void> {
  await demo.cluster.kubectl(
    'rollout',
    'restart',
    `deployment/${demo.namespace}`,
    '-n',
    demo.namespace,
  );
}
