/**
 * A bad deploy of the demo's Deployment, watched: a new pod template that must take nothing
 * from the running leader (`yieldToNewerTemplate`; the manifests' rollout comments), applied as
 * a JSON patch, watched until its pods have shown the failure for a while, then
 * `kubectl rollout undo` to the revision before. What the cluster tier asserts and
 * `pnpm bench rollout` measures.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreV1EventList } from '@kubernetes/client-node';
import { longestWorkGap, type LeaderWorkEvent, type WorkGap } from '@nest-leader/demo/demo-events';
import type { DemoDeployment, PodView } from './demo-deployment.js';
import type { PodLogCollector } from './pod-log-collector.js';
import { advertisedCandidates } from './pod-ghosts.js';

/** The bad templates, as JSON patches of the Deployment's good template. */
export const BAD_TEMPLATES = {
  // A registry on the node's own loopback that is not there: the pull fails at once, with no
  // traffic leaving the node's network namespace.
  'an image that cannot be pulled': [
    {
      op: 'replace',
      path: '/spec/template/spec/containers/0/image',
      value: '127.0.0.1:1/nest-leader-demo:missing',
    },
  ],
  // The app starts, advertises itself on the Lease and exits 1 three seconds after its first
  // "advertised itself" log line (or replica-started, were that first), without its stop path
  // (its advertisement stays), again and again. Timed from the advertisement, as the name says,
  // not from the end of the boot: on a loaded node a pod may advertise long before it finished
  // booting, and one alive past the settle time fails after it — outside what the settle time
  // claims to catch.
  'pods that crash after they advertise': [
    {
      op: 'add',
      path: '/spec/template/spec/containers/0/command',
      value: [
        'node',
        '-e',
        'let crashing = false; const write = process.stdout.write.bind(process.stdout); process.stdout.write = (chunk, ...rest) => { if (!crashing && /advertised itself on|"replica-started"/.test(String(chunk))) { crashing = true; setTimeout(() => process.exit(1), 3000); } return write(chunk, ...rest); }; import(\'/app/dist/main.js\');',
      ],
    },
  ],
  // Probes that always fail: never Ready, restarted by the liveness probe every ~30 s.
  'pods that never become healthy': [
    {
      op: 'replace',
      path: '/spec/template/spec/containers/0/livenessProbe/httpGet/path',
      value: '/never-healthy',
    },
    {
      op: 'replace',
      path: '/spec/template/spec/containers/0/readinessProbe/httpGet/path',
      value: '/never-healthy',
    },
  ],
} as const;
export type BadTemplate = keyof typeof BAD_TEMPLATES;

/** How long {@link watchBadDeploy} watches a template: see {@link badDeployWatch}. */
export interface BadDeployWatch {
  /** Watched this long after the failure shows (or, with `settleMs`, after the settle moment), ms. */
  observeMs: number;
  /** Watch until a bad pod's advertisement was seen this old first, ms. */
  settleMs?: number;
}

/**
 * How long a bad deploy is watched, per template — only as long as what it tests can take,
 * from the pods' timings (the manifests': newerTemplateSettleSeconds' default 45 s; retryPeriod
 * 2 s; liveness 3 × 10 s + 2 s; the handoff offer's window 2 × retryPeriod):
 * - unpullable image: its pods never run, so nothing is advertised; what can go wrong is the
 *   Deployment controller removing the old leader, which it decides on its syncs after the
 *   patch and after each pod status change: 10 s (one image-pull back-off) after the pull failed.
 * - crash after advertising: each restart advertises anew (the settle starts over), but a
 *   crashed pod's advertisement stays (no stop path) until its next start; once a
 *   CrashLoopBackOff plus a start outlast the settle time it looks settled (39–67 s after the
 *   first restart, measured), and the leader would yield to a dead pod (issue 31) — or, before
 *   handoff offers named the incarnation (2026-12-02), hand the Lease to the crash-looping pod's
 *   next container (1 of 2 label-routing runs). Watched until a bad advertisement was seen
 *   settle-time old (`settleMs`), then two retries and the offer's window — the moment the
 *   leader would yield and its offer fall inside the watch, whatever the boot time and back-offs.
 * - never healthy: its pods stay advertised until the first liveness kill, the liveness budget
 *   (32 s) after they started; were the settle time shorter, the leader would yield before the
 *   failure shows (it did with the earlier 30-s default: pod chaos seed 3321, 2026-12-02): two
 *   retries and the offer's window after the failure show any late yield.
 */
export function badDeployWatch(
  kind: BadTemplate,
  timings: { newerTemplateSettleMs: number; retryPeriodMs: number },
): BadDeployWatch {
  // Two retries to see the settle and offer, the offer's window of two more, and 2 s of slack.
  const yieldAndOfferMs = 4 * timings.retryPeriodMs + 2_000;
  switch (kind) {
    case 'an image that cannot be pulled':
      return { observeMs: 10_000 };
    case 'pods that crash after they advertise':
      return { observeMs: yieldAndOfferMs, settleMs: timings.newerTemplateSettleMs };
    case 'pods that never become healthy':
      return { observeMs: yieldAndOfferMs };
  }
}

/** What one bad deploy did, from its patch to the end of the watch (before the undo). */
export interface BadDeployFigures {
  kind: BadTemplate;
  /** The holder when the patch was applied. */
  leader: string;
  /** Every holder sampled (every ~0.5 s plus two kubectl reads) during the watch. */
  holders: string[];
  /** leaseTransitions at the end minus at the patch. */
  transitions: number;
  /** The longest time without a leader-work line of any pod, patch to end of the watch. */
  longestGap: WorkGap;
  /** Bad pods ever seen Ready. */
  everReady: string[];
  /** A bad pod's template hash was seen among the Lease's advertisements. */
  advertised: boolean;
  /** The bad pods at the end: restarts and why they wait. */
  badPods: Pick<PodView, 'name' | 'restarts' | 'waitingReason'>[];
  /** The Deployment's conditions at the end (`type=status reason`). */
  conditions: string[];
  /** What `kubectl rollout status --watch=false` said at the end (its error, if it failed). */
  rolloutStatus: string;
  /** The Events on the bad pods, one per reason (`reason: message`, the message cut at 160). */
  badPodEvents: string[];
  /** The leader pod's log lines during the watch, but its work beats (leader, shard): first 10. */
  leaderLogLines: string[];
  /** Patch to end of the watch, ms. */
  observedMs: number;
  /**
   * With `settleMs`: the failure showing to a bad pod's advertisement seen `settleMs` old, ms;
   * `undefined` when none was within `settleCapMs`.
   */
  settledAfterFailureMs?: number;
}

/**
 * Applies `kind` over the current template and watches until its pods show the failure (a
 * failed pull, or a restart) and `observeMs` more; at most `timeoutMs` for the failure to show.
 * With `settleMs`: until a bad pod's advertisement has been seen `settleMs` old (its startedAt;
 * a restart advertises anew, a stopping pod withdraws, so an old one is a crashed pod's, left
 * behind, which a leader could take for a settled candidate), then `observeMs` more — or, when
 * none got that old, until `settleCapMs` after the failure showed.
 */
export async function watchBadDeploy(
  demo: DemoDeployment,
  logs: PodLogCollector,
  kind: BadTemplate,
  {
    observeMs,
    settleMs,
    settleCapMs = 120_000,
    timeoutMs = 180_000,
  }: BadDeployWatch & { settleCapMs?: number; timeoutMs?: number },
): Promise<BadDeployFigures> {
  const first = await demo.leaseSpec();
  const leaderPod = (await demo.pods()).find((p) => p.name === first.holderIdentity);
  if (!leaderPod) throw new Error(`the holder ${first.holderIdentity} is not a pod`);
  const fromMs = Date.now();
  const t0 = performance.now();
  const firstLogLine = logs.lines.length;
  await demo.patch(BAD_TEMPLATES[kind]);
  const holders = new Set<string>();
  const badPodNames = new Set<string>();
  const everReady = new Set<string>();
  let advertised = false;
  let badHash: string | undefined;
  let failedAtMs: number | undefined;
  let badPods: PodView[] = [];
  let last = first;
  let settledAtMs: number | undefined;
  const watching = () => {
    if (failedAtMs === undefined) return true;
    const now = performance.now();
    if (settleMs !== undefined && settledAtMs === undefined) return now - failedAtMs < settleCapMs;
    return now - Math.max(failedAtMs, settledAtMs ?? 0) < observeMs;
  };
  while (watching()) {
    if (failedAtMs === undefined && performance.now() - t0 > timeoutMs) {
      throw new Error(`${kind}: the new pods did not show the failure within ${timeoutMs} ms`);
    }
    if (settleMs !== undefined && failedAtMs !== undefined && badHash !== undefined) {
      // The node is this host: the pods' startedAt and this clock are one clock.
      const oldestMs = Math.max(
        0,
        ...(await advertisedCandidates(demo))
          .filter((c) => c.podTemplateHash === badHash)
          .map((c) => Date.now() - c.startedAt.getTime()),
      );
      if (oldestMs >= settleMs) settledAtMs ??= performance.now();
    }
    last = await demo.leaseSpec();
    holders.add(last.holderIdentity);
    badPods = (await demo.pods()).filter(
      (p) => p.templateHash !== leaderPod.templateHash && !p.terminating,
    );
    badHash ??= badPods[0]?.templateHash;
    for (const p of badPods) badPodNames.add(p.name);
    if (badHash !== undefined && last.advertisedTemplates.includes(badHash)) advertised = true;
    for (const p of badPods) if (p.ready) everReady.add(p.name);
    const failed =
      kind === 'an image that cannot be pulled'
        ? badPods.some(
            (p) => p.waitingReason === 'ErrImagePull' || p.waitingReason === 'ImagePullBackOff',
          )
        : badPods.some((p) => p.restarts > 0);
    if (failed) failedAtMs ??= performance.now();
    await sleep(500);
  }
  const deployment = await demo.deployment();
  const leaderLogLines = logs.lines
    .slice(firstLogLine)
    .filter((l) => l.pod === leaderPod.name && !/"event":"(leader|shard)-work"/.test(l.line))
    .slice(0, 10)
    .map((l) => l.line.slice(0, 300));
  return {
    kind,
    leader: leaderPod.name,
    holders: [...holders],
    transitions: last.leaseTransitions - first.leaseTransitions,
    longestGap: longestWorkGap(leaderWork(logs), fromMs, Date.now()),
    everReady: [...everReady],
    advertised,
    badPods: badPods.map(({ name, restarts, waitingReason }) => ({
      name,
      restarts,
      waitingReason,
    })),
    conditions: (deployment.status?.conditions ?? []).map(
      (c) => `${c.type}=${c.status} ${c.reason}`,
    ),
    rolloutStatus: await rolloutStatus(demo),
    badPodEvents: await podEvents(demo, badPodNames),
    leaderLogLines,
    observedMs: Math.round(performance.now() - t0),
    ...(settledAtMs !== undefined && failedAtMs !== undefined
      ? { settledAfterFailureMs: Math.round(settledAtMs - failedAtMs) }
      : {}),
  };
}

/** `kubectl rollout status --watch=false`: its one line, or its error when it fails. */
async function rolloutStatus(demo: DemoDeployment): Promise<string> {
  const { cluster, namespace } = demo;
  try {
    const out = await cluster.kubectl(
      'rollout',
      'status',
      `deployment/${namespace}`,
      '-n',
      namespace,
      '--watch=false',
    );
    return out.trim();
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    return (typeof stderr === 'string' ? stderr : String(error)).trim();
  }
}

/** The Events on `pods`, one per reason: `reason: message` (cut at 160 characters). */
async function podEvents(demo: DemoDeployment, pods: ReadonlySet<string>): Promise<string[]> {
  const { cluster, namespace } = demo;
  const events = await cluster.getJson<CoreV1EventList>('get', 'events', '-n', namespace);
  const byReason = new Map<string, string>();
  for (const e of events.items) {
    if (e.involvedObject.kind !== 'Pod' || !pods.has(e.involvedObject.name ?? '')) continue;
    const reason = e.reason ?? '';
    if (!byReason.has(reason)) byReason.set(reason, (e.message ?? '').slice(0, 160));
  }
  return [...byReason].map(([reason, message]) => `${reason}: ${message}`);
}

/**
 * `kubectl rollout undo --to-revision=<revision>`, waited for until the rollout is done and
 * no pod of another template than `templateHash` is live.
 */
export async function undoBadDeploy(
  demo: DemoDeployment,
  revision: string,
  templateHash: string | undefined,
  timeoutMs = 180_000,
): Promise<void> {
  const { cluster, namespace } = demo;
  await cluster.kubectl(
    'rollout',
    'undo',
    `deployment/${namespace}`,
    '-n',
    namespace,
    `--to-revision=${revision}`,
  );
  const t0 = performance.now();
  for (;;) {
    const live = await demo.livePods();
    if ((await demo.rolloutDone()) && live.every((p) => p.templateHash === templateHash)) return;
    if (performance.now() - t0 > timeoutMs) {
      throw new Error(`rollout undo to revision ${revision} not done within ${timeoutMs} ms`);
    }
    await sleep(500);
  }
}

/** The main election's leader-work lines of every pod so far. */
export function leaderWork(logs: PodLogCollector): LeaderWorkEvent[] {
  return logs.json<LeaderWorkEvent>().filter((e) => e.event === 'leader-work');
}
