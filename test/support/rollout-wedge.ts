/**
 * Pod chaos seed 3344's wedge, made to happen during a rollout: the old template's only pod —
 * the leader, under the demo's `maxUnavailable: 2` of 3 — is SIGKILLed once a new pod has
 * advertised, so its restarted container starts after the new template's first pod, and it is
 * the one to take the expired Lease over. The new pods watch the Lease from their start and
 * would always see it expire first, so they are held off the API server (their egress to it
 * dropped in their own network namespaces) from the kill until the restarted container has
 * taken the Lease over; then let back. A library that dates a template by its containers'
 * starts takes the old template for the newest and never yields: the rollout never ends.
 */
import assert from 'node:assert/strict';
import type { DemoDeployment, PodView } from './demo-deployment.js';
import { killContainer, setEgressDrop } from './containerd.js';
import { eventually } from './eventually.js';
import { apiServerClusterIp } from './node-components.js';
import { advertisedCandidates } from './pod-ghosts.js';

/** What {@link restartOldLeaderAfterNewPods} did. */
export interface RestartedOldLeader {
  /** When the leader's container was SIGKILLed (wall ms). */
  killAt: number;
  /** Who took the expired Lease over: the leader's pod name, unless something went wrong. */
  holder: string;
  /** New pods held off the API server until then. */
  heldPods: number;
}

/**
 * Call right after `kubectl rollout restart`. Waits (at most `timeoutMs` per step) for a new
 * pod's advertisement, holds the new pods off, kills `leader`'s container, waits for the
 * Lease's next term after `leaseTransitions`, and always lets the new pods back.
 * @param oldPods - the pods before the rollout
 * @throws AssertionError when a step times out (the new pods are let back first).
 */
export async function restartOldLeaderAfterNewPods(
  demo: DemoDeployment,
  leader: PodView,
  oldPods: ReadonlySet<string>,
  leaseTransitions: number,
  timeoutMs: number,
): Promise<RestartedOldLeader> {
  assert.ok(leader.containerId, `the leader ${leader.name} has a container`);
  const { cluster } = demo;
  const apiServer = await apiServerClusterIp(cluster);
  const held = new Set<string>();
  const holdNewPods = async () => {
    for (const p of await demo.pods()) {
      if (oldPods.has(p.name) || !p.running || !p.containerId || held.has(p.containerId)) continue;
      await setEgressDrop(cluster, p.containerId, apiServer, true);
      held.add(p.containerId);
    }
  };
  try {
    await eventually(
      async () =>
        assert.ok(
          (await advertisedCandidates(demo)).some((c) => !oldPods.has(c.identity)),
          'a new pod advertised',
        ),
      { timeoutMs, intervalMs: 250 },
    );
    await holdNewPods();
    const killAt = Date.now();
    await killContainer(cluster, leader.containerId);
    const holder = await eventually(
      async () => {
        await holdNewPods();
        const spec = await demo.leaseSpec();
        assert.ok(spec.leaseTransitions > leaseTransitions, 'the expired Lease taken over');
        return spec.holderIdentity;
      },
      { timeoutMs, intervalMs: 250 },
    );
    return { killAt, holder, heldPods: held.size };
  } finally {
    for (const id of held) await setEgressDrop(cluster, id, apiServer, false);
  }
}
