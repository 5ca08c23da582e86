/**
 * A handover of the demo's leadership with ghosts on the Lease (issue 31), measured from the
 * pods' own `leader-work` lines: a graceful deletion of the leader pod, its eviction, or a
 * rollout — each after `ghosts` candidates were killed through the runtime and force-deleted
 * (`pod-ghosts.ts`), always the ones the leader would hand to first. What the cluster tier
 * asserts and `pnpm bench ghosts` measures.
 *
 * The rollout: a new pod must be a ghost *after it advertised itself*, so the old leader has to
 * be kept until the ghosts are left. With `maxUnavailable: 100%` every old pod stops at once,
 * and the leader hands to the first new pod that advertises within a poll — no time to kill it
 * in between. So such a rollout runs with `maxUnavailable: replicas − 1` first (only the leader
 * is Ready: the controller replaces the standbys, starts the new pods and keeps the old
 * leader), the ghosts are left among the new pods, and then the manifests' value is restored:
 * the controller stops the old leader, which hands over to the new pods. Manifests that keep
 * the old leader themselves (`maxUnavailable` below 100 %, with a leader that yields to a new
 * pod once it stayed advertised for `newerTemplateSettleSeconds`) are left as they are: the
 * ghosts are left within that settle time, and the leader's yield offers them first.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { longestWorkGap, type LeaderWorkEvent } from '@nest-leader/demo/demo-events';
import type { DemoDeployment } from './demo-deployment.js';
import { advertisedCandidates, leaveGhosts } from './pod-ghosts.js';
import type { PodLogCollector } from './pod-log-collector.js';

/** What ends the leader's term. */
export type GhostScenario = 'graceful deletion' | 'eviction' | 'rollout';
export const GHOST_SCENARIOS: readonly GhostScenario[] = [
  'graceful deletion',
  'eviction',
  'rollout',
];

/** How long the new leader may take to do its first leader-only work, ms. */
const HANDOVER_TIMEOUT_MS = 120_000;
/** How long a rollout's new pods may take to start and advertise themselves, ms. */
const NEW_PODS_TIMEOUT_MS = 180_000;

/** One handover with ghosts, from the action that ends the leader's term. */
export interface GhostHandoverFigures {
  scenario: GhostScenario;
  /** The ghosts left, in the order the leader preferred them. */
  ghosts: string[];
  /** The holder when the scenario began. */
  from: string;
  /** The first other live pod that held the Lease and worked. */
  to: string;
  /** Every holder the Lease named from the action on (sampled every ~0.3 s plus a read). */
  holders: string[];
  /** A ghost held the Lease at some sample (the defect of issue 31). */
  handedToGhost: boolean;
  /** leaseTransitions when `to` first worked minus at the action. */
  transitions: number;
  /**
   * The longest time without a `leader-work` line of any pod, ms, from the action (the delete,
   * the eviction, the rollout's restart) to the new leader's first line.
   */
  longestGapMs: number;
  /** Where that gap began and ended (ISO 8601, the node's clock: the pods' `at`). */
  gapFrom: string;
  gapTo: string;
  /** The handover's own gap, ms: from `from`'s last leader-work line to `to`'s first. */
  handoverGapMs: number;
  /** From the action to the new leader's first line, ms. */
  handoverMs: number;
}

/**
 * Leaves `ghostCount` ghosts, then deletes, evicts or rolls out the leader (a live pod holding
 * the Lease and routed to: the caller waits for that) and follows the Lease until another live
 * pod holds it and has worked. Leaves the Deployment as it found it (a rollout: its new
 * template, the manifests' strategy).
 * @throws AssertionError when a step times out (the new leader's first work: 120 s).
 */
export async function ghostHandover(
  demo: DemoDeployment,
  logs: PodLogCollector,
  scenario: GhostScenario,
  ghostCount: number,
): Promise<GhostHandoverFigures> {
  const from = (await demo.leaseSpec()).holderIdentity;
  let ghosts: string[];
  let startedMs: number;
  let startTransitions: number;
  if (scenario === 'rollout') {
    const stalled = await stallRollout(demo);
    startedMs = Date.now();
    startTransitions = (await demo.leaseSpec()).leaseTransitions;
    await demo.cluster.kubectl(
      'rollout',
      'restart',
      `deployment/${demo.namespace}`,
      '-n',
      demo.namespace,
    );
    // Held by us, the rollout waits for every new pod (the ghosts then rank before all of
    // them); held by the manifests (a leader that yields to a new pod once it stayed advertised
    // for newerTemplateSettleSeconds), only for as many as the ghosts, well within that time.
    const replicas = (await demo.deployment()).spec!.replicas ?? 1;
    await newPodsAdvertised(demo, from, stalled ? replicas : Math.max(1, ghostCount));
    ghosts = await leaveGhosts(demo, ghostCount);
    // The manifests' strategy again: the controller stops the old leader.
    await stalled?.();
  } else {
    ghosts = await leaveGhosts(demo, ghostCount);
    startedMs = Date.now();
    startTransitions = (await demo.leaseSpec()).leaseTransitions;
    if (scenario === 'eviction') await demo.evict(from);
    else await demo.cluster.kubectl('delete', 'pod', from, '-n', demo.namespace, '--wait=false');
  }
  const holders: string[] = [];
  const deadline = performance.now() + HANDOVER_TIMEOUT_MS;
  for (;;) {
    const { holderIdentity, leaseTransitions } = await demo.leaseSpec();
    if (holderIdentity !== '' && holderIdentity !== holders.at(-1)) holders.push(holderIdentity);
    const firstWork = logs
      .json<LeaderWorkEvent>()
      .find(
        (e) =>
          e.event === 'leader-work' &&
          e.identity === holderIdentity &&
          e.identity !== from &&
          Date.parse(e.at) >= startedMs,
      );
    if (firstWork && !ghosts.includes(holderIdentity)) {
      const endMs = Date.parse(firstWork.at);
      const work = logs.json<LeaderWorkEvent>().filter((e) => e.event === 'leader-work');
      const gap = longestWorkGap(work, startedMs, endMs);
      const lastOldMs = Math.max(
        ...work
          .filter((e) => e.identity === from && Date.parse(e.at) <= endMs)
          .map((e) => Date.parse(e.at)),
      );
      return {
        scenario,
        ghosts,
        from,
        to: holderIdentity,
        holders,
        handedToGhost: holders.some((h) => ghosts.includes(h)),
        transitions: leaseTransitions - startTransitions,
        longestGapMs: gap.gapMs,
        gapFrom: new Date(gap.fromMs).toISOString(),
        gapTo: new Date(gap.toMs).toISOString(),
        handoverGapMs: endMs - lastOldMs,
        handoverMs: endMs - startedMs,
      };
    }
    assert.ok(
      performance.now() < deadline,
      `no live pod other than ${from} led and worked within ${HANDOVER_TIMEOUT_MS} ms ` +
        `(holders ${JSON.stringify(holders)}, ghosts ${JSON.stringify(ghosts)})`,
    );
    await sleep(300);
  }
}

/**
 * Sets the rollout's `maxUnavailable` to replicas − 1 unless it is below 100 % already: only
 * the leader is Ready, so the controller keeps it and replaces the rest. Resolves how to
 * restore the manifests' value (`undefined`: nothing changed).
 */
async function stallRollout(demo: DemoDeployment): Promise<(() => Promise<void>) | undefined> {
  const deployment = await demo.deployment();
  const shipped = deployment.spec!.strategy?.rollingUpdate?.maxUnavailable;
  if (shipped !== '100%') return undefined;
  const replicas = deployment.spec!.replicas ?? 1;
  const set = (value: number | string) =>
    demo.cluster.kubectl(
      'patch',
      'deployment',
      demo.namespace,
      '-n',
      demo.namespace,
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'replace', path: '/spec/strategy/rollingUpdate/maxUnavailable', value },
      ]),
    );
  await set(replicas - 1);
  return async () => {
    await set(shipped);
  };
}

/**
 * Waits until `count` candidates of another pod template than `leader`'s advertise themselves
 * from running pods, while `leader` still holds the Lease.
 * @throws AssertionError as soon as another holds it (the ghosts would come too late), or after
 *   180 s.
 */
async function newPodsAdvertised(
  demo: DemoDeployment,
  leader: string,
  count: number,
): Promise<void> {
  const deadline = performance.now() + NEW_PODS_TIMEOUT_MS;
  for (;;) {
    const candidates = await advertisedCandidates(demo);
    const own = candidates.find((c) => c.identity === leader)?.podTemplateHash;
    const running = new Set((await demo.livePods()).filter((p) => p.running).map((p) => p.name));
    const newer = candidates.filter((c) => c.podTemplateHash !== own && running.has(c.identity));
    const { holderIdentity } = await demo.leaseSpec();
    assert.equal(holderIdentity, leader, 'the old leader leads while the new pods start');
    if (newer.length >= count) return;
    assert.ok(
      performance.now() < deadline,
      `${newer.length} of ${count} new pods advertised themselves within ${NEW_PODS_TIMEOUT_MS} ms`,
    );
    await sleep(500);
  }
}
