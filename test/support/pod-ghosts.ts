/**
 * Ghosts among the demo's pods (issue 31): a candidate whose advertisement stays on the Lease
 * after its process died without its stop path — its container SIGKILLed through the runtime
 * (as an OOM kill) and its Pod force-deleted (as a dead node's pods are), so nothing withdraws
 * it. How the cluster tier and `pnpm bench ghosts` leave them, always in the place that hurts
 * most: the candidate the leader would hand to next.
 */
import assert from 'node:assert/strict';
import type { V1Lease } from '@kubernetes/client-node';
import {
  CANDIDATES_ANNOTATION,
  parseAdvertisedCandidates,
  preferredCandidate,
  type AdvertisedCandidate,
} from 'nest-leader/core';
import { killContainer } from './containerd.js';
import type { DemoDeployment } from './demo-deployment.js';
import { eventually } from './eventually.js';

/** How long a ghost's replacement pod may take to start and advertise itself, ms. */
const REPLACEMENT_TIMEOUT_MS = 180_000;

/** The candidates advertised on the Deployment's Lease (annotation `nest-leader/candidates`). */
export async function advertisedCandidates(demo: DemoDeployment): Promise<AdvertisedCandidate[]> {
  const lease = await demo.cluster.getJson<V1Lease>(
    'get',
    'lease',
    demo.namespace,
    '-n',
    demo.namespace,
  );
  return parseAdvertisedCandidates(lease.metadata?.annotations?.[CANDIDATES_ANNOTATION]) ?? [];
}

/**
 * Leaves `count` ghosts, one after another: each time the candidate the Lease's holder would
 * hand to now — `preferredCandidate` over the advertisements without the ghosts left so far,
 * so every ghost ranks before every live candidate — is killed through the runtime and
 * force-deleted, and found still advertised; then waits until the ReplicaSet's replacement runs
 * and advertises itself. Resolves the ghosts' names in the order the leader prefers them.
 * @throws AssertionError when no live advertised candidate is left to kill, or a replacement
 *   did not advertise itself within 180 s.
 */
export async function leaveGhosts(demo: DemoDeployment, count: number): Promise<string[]> {
  const ghosts: string[] = [];
  for (let i = 0; i < count; i++) {
    const { holderIdentity } = await demo.leaseSpec();
    const live = (await advertisedCandidates(demo)).filter((c) => !ghosts.includes(c.identity));
    const target = preferredCandidate(live, holderIdentity)?.identity;
    assert.ok(target, `a live candidate to turn into ghost ${i + 1} of ${count}`);
    const pod = (await demo.livePods()).find((p) => p.name === target && p.running);
    assert.ok(pod?.containerId, `the preferred candidate ${target} is a running pod`);
    const before = new Set((await demo.pods()).map((p) => p.name));
    await killContainer(demo.cluster, pod.containerId);
    await demo.cluster.kubectl(
      'delete',
      'pod',
      pod.name,
      '-n',
      demo.namespace,
      '--grace-period=0',
      '--force',
    );
    ghosts.push(pod.name);
    const left = (await advertisedCandidates(demo)).map((c) => c.identity);
    assert.ok(left.includes(pod.name), `the killed pod ${pod.name} is still advertised`);
    // (Later it may be gone: a leader that offered it the Lease meanwhile removed it.)
    await eventually(
      async () => {
        const names = (await advertisedCandidates(demo)).map((c) => c.identity);
        const fresh = (await demo.livePods()).filter((p) => !before.has(p.name) && p.running);
        assert.ok(
          fresh.some((p) => names.includes(p.name)),
          `a replacement for ${pod.name} runs and advertises itself`,
        );
      },
      { timeoutMs: REPLACEMENT_TIMEOUT_MS, intervalMs: 500 },
    );
  }
  return ghosts;
}
