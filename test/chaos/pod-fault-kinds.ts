/**
 * The pod-level fault catalogue of `pnpm chaos --cluster`: what each fault does to the demo's
 * pods on the node cluster, and — in one table — the longest leaderless gap it may cause,
 * derived from the election timings of the shipped manifests (apps/demo/deploy). Pure data and
 * arithmetic, plus reading the manifests' timings.
 */
import {
  ACQUIRE_JITTER,
  DEFAULT_LEASE_DURATION_SECONDS,
  DEFAULT_RENEW_DEADLINE_SECONDS,
  DEFAULT_RETRY_PERIOD_SECONDS,
  defaultNewerTemplateSettleSeconds,
} from 'nest-leader/core';
import { loadDemoManifests } from '@nest-leader/demo/launcher/demo-manifests';
import { DRAIN_MS } from './fault-kinds.js';

/** Every pod-level fault the schedule draws from. */
export const POD_FAULT_KINDS = [
  'pod-delete',
  'pod-evict',
  'container-kill',
  'ghost-then-delete',
  'scale-unstarted',
  'container-freeze',
  'partition',
  'kubelet-restart',
  'containerd-restart',
  'apiserver-stall',
  'rollout-during-failover',
  'rollout-stale-entry',
  'rollout-then-leader-kill',
  'bad-deploy-unpullable',
  'bad-deploy-crashloop',
  'bad-deploy-unhealthy',
  'cluster-restart',
] as const;

/**
 * A pod fault kind, or the positive control's round: the deliberately unsafe candidate
 * (test/support/unsafe-candidate.ts) joins the pods' Lease, is SIGSTOPped until a pod took
 * over, and woken (never drawn by the schedule; `--unsafe-intruder` adds it at the end).
 */
export type PodFaultKind = (typeof POD_FAULT_KINDS)[number] | 'unsafe-intruder';

/** The pods' election timings and the period of their own leader-only work, ms. */
export interface PodChaosTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** How long a newer template's pod must stay advertised before the leader yields to it. */
  newerTemplateSettleMs: number;
  /**
   * The longest time between two work lines of a live term: the shipped pods log no heartbeat,
   * only their cron job (`dispatch-jobs`, DISPATCH_CRON: every 2 s).
   */
  workPeriodMs: number;
}

/** The demo's `dispatch-jobs` period (DISPATCH_CRON `*\/2 * * * * *`), ms. */
export const POD_WORK_PERIOD_MS = 2000;

/**
 * Scheduling slack in every bound, ms: a pod woken late on the loaded 2-core node, the
 * handoff's or acquisition's request, Nest dispatching the event (the cluster tier's 3 s).
 */
export const POD_SLACK_MS = 3000;

/**
 * The timings the shipped Deployment gives its pods: its `LEASE_DURATION_SECONDS`,
 * `RENEW_DEADLINE_SECONDS`, `RETRY_PERIOD_SECONDS` and `NEWER_TEMPLATE_SETTLE_SECONDS` env
 * values, else the library's defaults (what the manifests rely on today: 15 s, 10 s, 2 s, 45 s).
 * @throws Error if the manifests hold no Deployment with a container.
 */
export function manifestTimings(): PodChaosTimings {
  const [deployment] = loadDemoManifests({ kinds: ['Deployment'] }) as {
    spec?: {
      template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } };
    };
  }[];
  const env = deployment?.spec?.template?.spec?.containers?.[0]?.env;
  if (!env) throw new Error('apps/demo/deploy has no Deployment with a container');
  const seconds = (name: string, fallback: number) => {
    const value = env.find((e) => e.name === name)?.value;
    return (value === undefined ? fallback : Number(value)) * 1000;
  };
  const leaseDurationMs = seconds('LEASE_DURATION_SECONDS', DEFAULT_LEASE_DURATION_SECONDS);
  return {
    leaseDurationMs,
    renewDeadlineMs: seconds('RENEW_DEADLINE_SECONDS', DEFAULT_RENEW_DEADLINE_SECONDS),
    retryPeriodMs: seconds('RETRY_PERIOD_SECONDS', DEFAULT_RETRY_PERIOD_SECONDS),
    newerTemplateSettleMs: seconds(
      'NEWER_TEMPLATE_SETTLE_SECONDS',
      defaultNewerTemplateSettleSeconds(leaseDurationMs / 1000),
    ),
    workPeriodMs: POD_WORK_PERIOD_MS,
  };
}

/** One pod fault kind: what the harness does, whether it ends the term, its bound and why. */
export interface PodFaultSpec {
  kind: PodFaultKind;
  action: string;
  endsTerm: boolean;
  /** Over L, D, R (timings), J = 1 + ACQUIRE_JITTER, W (work period), drain, S (slack). */
  boundFormula: string;
  reasoning: string;
  /** The bound, ms; `measured`: the round's figures the bound depends on ({@link POD_MEASUREMENTS}). */
  boundMs: (t: PodChaosTimings, measured?: Readonly<Record<string, number>>) => number;
}

/** Names of the figures a round measures (FaultRecord.measurements) that bounds depend on. */
export const POD_MEASUREMENTS = {
  /** `apiserver-stall`: how long the API server was SIGSTOPped, ms. */
  stallMs: 'stallMs',
  /** `apiserver-stall`: when the stall began (wall ms). */
  stallStartAt: 'stallStartAt',
  /** `apiserver-stall`: the old leader's `leadership-lost` line after the stall began, ms. */
  stepDownMs: 'stepDownMs',
  /**
   * `rollout-during-failover`: from the kill to the first new pod's `replica-started` line;
   * `rollout-then-leader-kill`: to the restarted leader container's;
   * `cluster-restart`: from the kill to the first container's `replica-started` after it, ms.
   */
  newPodUpMs: 'newPodUpMs',
  /**
   * `cluster-restart`: from the kill to the restarted API server's `/readyz` through the
   * kubernetes Service's ClusterIP from a pod's network namespace (the pods' path), ms.
   */
  apiReadyMs: 'apiReadyMs',
  /** `kubelet-restart`, `containerd-restart`: app containers that restarted while it did. */
  containerRestarts: 'containerRestarts',
  /** `bad-deploy-*`: the patch to the end of the watch (before the undo), ms. */
  badDeployWatchMs: 'badDeployWatchMs',
  /** `bad-deploy-crashloop`: the first crash to a left-behind advertisement 2 L old, ms. */
  settledAfterFailureMs: 'settledAfterFailureMs',
} as const;

/**
 * How long `apiserver-stall` keeps the API server stopped: longer than renewDeadline (the
 * leader must step down while it is stopped), shorter than leaseDuration (the followers' view
 * of the record is not yet expired when it wakes).
 */
export const apiStallMs = (t: PodChaosTimings) => t.renewDeadlineMs + 2 * t.retryPeriodMs;

const J = 1 + ACQUIRE_JITTER;
/** One handoff: the old term's last work line (≤ W before its end), drain, a follower's next attempt. */
export const podHandoffBoundMs = (t: PodChaosTimings) =>
  t.workPeriodMs + DRAIN_MS + J * t.retryPeriodMs + POD_SLACK_MS;
/** A crash: the followers wait out leaseDuration from their last sighting (≤ J·R after the last renewal). */
const crashMs = (t: PodChaosTimings) =>
  t.leaseDurationMs + J * t.retryPeriodMs + t.workPeriodMs + POD_SLACK_MS;

/** The process tier's allowance for a kube-apiserver just started (RBAC answers 403 until its caches sync), ms. */
const API_WARMUP_MS = 5000;

/**
 * A crash counted from the first candidate up again (U, measured: `newPodUpMs`): it sees the
 * record at most J·R after it is up and takes over leaseDuration after that, at its next attempt.
 */
const afterRestartMs = (t: PodChaosTimings, measured?: Readonly<Record<string, number>>) =>
  (measured?.[POD_MEASUREMENTS.newPodUpMs] ?? 0) +
  t.leaseDurationMs +
  2 * J * t.retryPeriodMs +
  t.workPeriodMs +
  POD_SLACK_MS;

/**
 * A bad deploy (`test/support/bad-deploy.ts`): the template patched, watched, then `kubectl
 * rollout undo`. The old leader must keep the Lease throughout and its work must not pause
 * longer than one handoff's bound (the checker's `work-paused`).
 */
function badDeploySpec(kind: PodFaultKind, template: string): PodFaultSpec {
  return {
    kind,
    action: `patch the Deployment's template: ${template}; watch (test/support/bad-deploy.ts: badDeployWatch), then kubectl rollout undo`,
    endsTerm: false,
    boundFormula: 'W + drain + J·R + S (no transition; the longest pause of leader work)',
    reasoning:
      'a newer template that never proves itself takes nothing from the leader (yieldToNewerTemplate waits for a settled, live candidate; offers name the incarnation): any transition is a violation, and leader work may pause no longer than one handoff',
    boundMs: podHandoffBoundMs,
  };
}

/**
 * THE table of pod faults and their gap bounds. A gap runs from the last leader-work line of
 * one term to the `leadership-acquired` line of the next (the checker's definition). A leader
 * stopped gracefully leads on while it waits for a peer (its work running), so the wait is not
 * leaderless time: only the handoff itself is.
 */
export const POD_FAULT_SPECS: Record<PodFaultKind, PodFaultSpec> = {
  'pod-delete': {
    kind: 'pod-delete',
    action: 'kubectl delete pod <leader> (graceful: SIGTERM, terminationGracePeriodSeconds 60)',
    endsTerm: true,
    boundFormula: 'W + drain + J·R + S',
    reasoning:
      'the leader drains and hands the Lease to an advertised live peer (or releases it): one handoff, never a lease',
    boundMs: podHandoffBoundMs,
  },
  'pod-evict': {
    kind: 'pod-evict',
    action: 'evict the leader pod (policy/v1 Eviction, under the shipped PodDisruptionBudget)',
    endsTerm: true,
    boundFormula: 'W + drain + J·R + S',
    reasoning: 'an eviction is a graceful deletion: one handoff',
    boundMs: podHandoffBoundMs,
  },
  'container-kill': {
    kind: 'container-kill',
    action:
      "SIGKILL the leader's container through containerd (ctr task kill); the kubelet restarts it",
    endsTerm: true,
    boundFormula: 'L + J·R + W + S',
    reasoning:
      'no release: a follower takes over leaseDuration after it last saw the record change, at most J·R after the last renewal',
    boundMs: crashMs,
  },
  'ghost-then-delete': {
    kind: 'ghost-then-delete',
    action:
      'SIGKILL the follower the leader would hand to (the preferred advertisement on the Lease) through containerd and force-delete its pod (--grace-period=0 --force: no stop path, its advertisement stays on the Lease); once its replacement runs, kubectl delete pod <leader>',
    endsTerm: true,
    boundFormula: 'W + drain + J·R + S',
    reasoning:
      'a stale advertisement must not cost a lease: the graceful deletion is still one handoff (handing to the dead pod would wait out leaseDuration)',
    boundMs: podHandoffBoundMs,
  },
  'scale-unstarted': {
    kind: 'scale-unstarted',
    action:
      'kubectl scale the Deployment up by 2 and, once the new pods exist (not yet started), back down; then watch for leaseDuration',
    endsTerm: false,
    boundFormula: 'L + J·R + W + S (no transition expected)',
    reasoning:
      'the ReplicaSet removes the pods that never started (not Ready, newest first); the leader is not touched: any transition is a violation',
    boundMs: crashMs,
  },
  'container-freeze': {
    kind: 'container-freeze',
    action:
      "freeze the leader's container (cgroup v1 freezer FROZEN) for L + 2·R, then THAWED (shorter than the liveness probe's 30 s budget: the kubelet does not restart it)",
    endsTerm: true,
    boundFormula: 'L + J·R + W + S',
    reasoning:
      'as a crash: renewals stop with the frozen process; once thawed, the old leader must not work in its ended term',
    boundMs: crashMs,
  },
  partition: {
    kind: 'partition',
    action:
      "drop the leader pod's packets to the API server (iptables in the pod's network namespace, OUTPUT to the kubernetes Service IP) until a pod took over (+ 0.25 s; at least L), then heal",
    endsTerm: true,
    boundFormula: 'L − D + J·R + W + S',
    reasoning:
      'the leader works until renewDeadline after its last renewal; followers take over leaseDuration after seeing it',
    boundMs: (t) =>
      t.leaseDurationMs - t.renewDeadlineMs + J * t.retryPeriodMs + t.workPeriodMs + POD_SLACK_MS,
  },
  'kubelet-restart': {
    kind: 'kubelet-restart',
    action:
      'restart the kubelet (scripts/cluster.sh stops it with SIGTERM and starts it again); then watch for leaseDuration',
    endsTerm: false,
    boundFormula: 'L + J·R + W + S (no transition expected)',
    reasoning:
      'the pods run on without their kubelet: the leader keeps renewing, any transition is a violation',
    boundMs: crashMs,
  },
  'containerd-restart': {
    kind: 'containerd-restart',
    action:
      'restart containerd (its shims and the containers live on); then watch for leaseDuration',
    endsTerm: false,
    boundFormula: 'L + J·R + W + S (no transition expected)',
    reasoning:
      'the containers outlive their runtime daemon: the leader keeps renewing, any transition is a violation',
    boundMs: crashMs,
  },
  'apiserver-stall': {
    kind: 'apiserver-stall',
    action:
      "SIGSTOP the node cluster's kube-apiserver (+ etcd, one process) for Δ = D + 2·R, then SIGCONT: connections stay open, nothing answers",
    endsTerm: true,
    boundFormula: 'max(Δ + R, L + J·R) + J·R − D + W + S',
    reasoning:
      "the leader's last renewal is at most R before the stall: it steps down at renewDeadline after it (checked: its leadership-lost line within D + S of the stall's start) and works until then; a follower takes over at its first attempt after the API answers again and the record it saw last has expired (L after it saw it, ≤ J·R after that renewal)",
    boundMs: (t, measured) => {
      const stall = measured?.[POD_MEASUREMENTS.stallMs] ?? apiStallMs(t);
      return (
        Math.max(stall + t.retryPeriodMs, t.leaseDurationMs + J * t.retryPeriodMs) +
        J * t.retryPeriodMs -
        t.renewDeadlineMs +
        t.workPeriodMs +
        POD_SLACK_MS
      );
    },
  },
  'cluster-restart': {
    kind: 'cluster-restart',
    action:
      "restart the whole node cluster with the Lease's history kept: SIGKILL every app container through containerd (no stop path: advertisements, handoff markers and role labels stay), then restart the control plane (kube-apiserver + etcd, its data kept), containerd and the kubelet; the kubelet starts the containers again (the same pods, so the same identities)",
    endsTerm: true,
    boundFormula:
      'max(U, V) + A + L + 2·J·R + W + S (U: the kill to the first container up again, V: to the API server ready again through the ClusterIP from a pod network namespace, as the pods reach it, both measured; A = 5 s of API warm-up)',
    reasoning:
      'nobody released and the Lease keeps its holder and transitions: a restarted candidate first sees the record at most J·R after it is up and the API server answers (its RBAC authorizer may refuse for a few seconds after a start, as in the process tier), and takes over leaseDuration after that, at its next attempt; tokens continue from the kept history',
    boundMs: (t, measured) =>
      Math.max(
        measured?.[POD_MEASUREMENTS.newPodUpMs] ?? 0,
        measured?.[POD_MEASUREMENTS.apiReadyMs] ?? 0,
      ) +
      API_WARMUP_MS +
      afterRestartMs(t),
  },
  'rollout-during-failover': {
    kind: 'rollout-during-failover',
    action:
      "SIGKILL the leader's container through containerd and at once kubectl rollout restart the Deployment: the rollout begins while no pod leads (the controller replaces the old standbys at once)",
    endsTerm: true,
    boundFormula: 'U + L + 2·J·R + W + S (U: the kill to the first new pod up, measured)',
    reasoning:
      'no release, and the old standbys go with the rollout: a new pod first sees the record at most J·R after it is up and takes over leaseDuration after that, at its next attempt',
    boundMs: afterRestartMs,
  },
  'rollout-stale-entry': {
    kind: 'rollout-stale-entry',
    action:
      'leave a stale entry on the Lease (the follower the leader would hand to SIGKILLed and force-deleted, as ghost-then-delete), then kubectl rollout restart the Deployment',
    endsTerm: true,
    boundFormula: 'W + drain + J·R + S',
    reasoning:
      'the leader waits for a pod of the new template and hands to it (never to the stale entry): one handoff per transition',
    boundMs: podHandoffBoundMs,
  },
  'rollout-then-leader-kill': {
    kind: 'rollout-then-leader-kill',
    action:
      "kubectl rollout restart the Deployment; once a new pod advertised, hold the new pods off the API server (egress dropped in their network namespaces), SIGKILL the leader's container and let the new pods back once its restarted container — the old template's only pod, started after the new template's first pod — took the Lease over (pod chaos seed 3344's wedge)",
    endsTerm: true,
    boundFormula: 'U + L + 2·J·R + W + S (U: the kill to the restarted container up, measured)',
    reasoning:
      "no release, and only the restarted container can reach the API server: it sees the record at most J·R after it is up and takes over leaseDuration after that; then, its template dated by its pod's creation, it yields to the new template after the settle (one graceful handoff) and the rollout ends — dated by its restart, it would never yield (the round's settle would time out)",
    boundMs: afterRestartMs,
  },
  'bad-deploy-unpullable': badDeploySpec(
    'bad-deploy-unpullable',
    "an image that cannot be pulled (a registry on the node's loopback that is not there)",
  ),
  'bad-deploy-crashloop': badDeploySpec(
    'bad-deploy-crashloop',
    'pods that exit 1 three seconds after they advertised themselves, without their stop path (their advertisements stay), again and again; watched until one left behind looks settled (2 L old), then the offer window and more',
  ),
  'bad-deploy-unhealthy': badDeploySpec(
    'bad-deploy-unhealthy',
    'pods whose liveness and readiness probes always fail (restarted by the kubelet about every 30 s)',
  ),
  'unsafe-intruder': {
    kind: 'unsafe-intruder',
    action:
      "positive control: the unsafe candidate (expiry by the remote renewTime on a wall clock 2 L ahead, never steps down) takes the pods' Lease, is SIGSTOPped until a pod leads again, then SIGCONTed",
    endsTerm: true,
    boundFormula: 'L + J·R + W + S',
    reasoning:
      'the checker must report the unsafe candidate working beside the pod that took over (overlapping terms)',
    boundMs: crashMs,
  },
};

/** The bound of gaps before the first fault (the first election): a crash's. */
export const podStartupBoundMs = crashMs;
