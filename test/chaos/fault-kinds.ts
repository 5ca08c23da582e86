/**
 * The chaos harness's fault catalogue: every kind of fault, what it does, and the longest
 * leaderless gap it may cause, derived from the election timings. Pure data and arithmetic.
 */
import { ACQUIRE_JITTER } from 'nest-leader/core';

/** Every fault the schedule draws from. */
export const FAULT_KINDS = [
  'sigkill',
  'sigterm',
  'sigstop',
  'event-loop-block',
  'partition-blackhole',
  'partition-reset',
  'slow-close',
  'latency-near',
  'latency-past',
  'apiserver-restart',
  'apiserver-down',
  'conflict-storm',
  'foreign-writer',
  'lease-deleted',
  'same-identity',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

/** Election timings of the replicas, ms. */
export interface ChaosTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** The demo's `LEADER_HEARTBEAT_MS`: leader work every this many ms. */
  heartbeatMs: number;
}

/**
 * Allowances in every bound, ms:
 * - `slackMs`: scheduling on a loaded 2-core machine (a process woken late, the acquiring
 *   request's round trip, Nest dispatching the acquired event to the heartbeat loop);
 * - `apiWarmupMs`: after a kube-apiserver (re)start, its RBAC authorizer answers 403 until its
 *   caches sync; the safety-defects soak saw this last 2–5 s.
 */
export interface BoundAllowances {
  slackMs: number;
  apiWarmupMs: number;
}

export const DEFAULT_ALLOWANCES: BoundAllowances = { slackMs: 1500, apiWarmupMs: 5000 };

/**
 * Extra copies of a kind in each bag of the schedule (every kind is in every bag once).
 * Rolling updates (SIGTERM) and crashes are the most common leader changes in a real cluster
 * and the quickest rounds here: with 4 more SIGTERMs and 1 more SIGKILL a bag of 20 rounds
 * gives 18 transitions, so 1,000 transitions fit in an hour on 2 cores while every other kind
 * is still applied 56 times.
 */
export const BAG_EXTRAS: Partial<Record<FaultKind, number>> = { sigterm: 4, sigkill: 1 };

/** A follower retries every retryPeriod × [1, J): J = 1 + the library's ACQUIRE_JITTER. */
export const RETRY_JITTER = 1 + ACQUIRE_JITTER;

/** How long the demo's SIGTERM drain may take: one simulated dispatch (SIMULATED_DISPATCH_MS). */
export const DRAIN_MS = 150;

/** What a fault did at run time that its bound depends on. */
export interface FaultMeasurements {
  /** For API-server faults: from stopping it to /readyz ok again, ms. */
  apiDowntimeMs?: number;
  /** For `lease-deleted`: when the DELETE was sent, wall ms (the ledger goes with the Lease). */
  leaseDeletedAt?: number;
}

/** The key of {@link FaultMeasurements.leaseDeletedAt} in a fault record's measurements. */
export const LEASE_DELETED_AT = 'leaseDeletedAt' satisfies keyof FaultMeasurements;

/** One fault kind's description, for the report and the README. */
export interface FaultSpec {
  kind: FaultKind;
  /** What the harness does. */
  action: string;
  /** Whether it must end the leader's term (then the round waits for a new one). */
  endsTerm: boolean;
  /** The bound as a formula over L (leaseDuration), D (renewDeadline), R (retryPeriod)… */
  boundFormula: string;
  /** Why the bound holds. */
  reasoning: string;
}

/** How long each fault lasts, ms (the schedule's durations, derived from the timings). */
export function faultDurations(t: ChaosTimings) {
  return {
    /** Event-loop block: past the lease and past the followers' takeover. */
    pastLeaseMs: t.leaseDurationMs + 1000,
    /**
     * SIGSTOP, partitions, latency past renewDeadline: held until a follower took over, plus
     * `afterTakeoverMs` (so the old leader comes back into a fresh term), at least leaseDuration
     * and at most `pastLeaseMs`.
     */
    untilTakeover: { minMs: t.leaseDurationMs, afterTakeoverMs: 250 },
    /** API server down: longer than leaseDuration (plus its restart time). */
    apiDownMs: t.leaseDurationMs + 500,
    /**
     * Latency the elector tolerates, by the library's documented condition for keeping one
     * term, max(retryPeriod, r) + r < renewDeadline for a request time r: a request on a fresh
     * TLS connection costs two round trips (r = 2 × latency), and this latency uses 75 % of
     * that allowance: 4 × latency = 0.75 × renewDeadline (when 2 × latency ≥ retryPeriod).
     */
    nearLatencyMs: Math.round((0.75 * t.renewDeadlineMs) / 4),
    /** Latency no renewal survives: past renewDeadline. */
    pastLatencyMs: t.renewDeadlineMs + 500,
    /** How long tolerated latency is applied: leaseDuration + two retry periods. */
    nearLatencyHoldMs: t.leaseDurationMs + 2 * t.retryPeriodMs,
    /** The slow foreign writer's period: under leaseDuration, so it lands in every lease. */
    foreignWriterPeriodMs: Math.round(0.75 * t.leaseDurationMs),
    /** The conflict storm's period. */
    stormPeriodMs: 50,
    /** How long a duplicate identity runs beside the leader, once it is up. */
    duplicateMs: t.leaseDurationMs + t.retryPeriodMs,
  };
}

/**
 * The catalogue. Bounds use L = leaseDuration, D = renewDeadline, R = retryPeriod,
 * J = 1.2 (jitter), H = heartbeat, S = slack, A = API warm-up, Δ = measured API downtime.
 * A gap runs from the last leader-work line of one term to the `leadership-acquired` line of
 * the next.
 */
export const FAULT_SPECS: Record<FaultKind, FaultSpec> = {
  sigkill: {
    kind: 'sigkill',
    action: 'SIGKILL the leader, restart it as a follower',
    endsTerm: true,
    boundFormula: 'L + J·R + H + S',
    reasoning:
      'a follower saw the last renewal at most J·R after it and takes over leaseDuration after that sighting',
  },
  sigterm: {
    kind: 'sigterm',
    action: 'SIGTERM the leader (drain, release), restart it',
    endsTerm: true,
    boundFormula: 'J·R + drain + H + S',
    reasoning: 'the Lease is released; a follower takes a free Lease at its next attempt',
  },
  sigstop: {
    kind: 'sigstop',
    action: 'SIGSTOP the leader until a follower took over (+ 0.25 s; L to L + 1 s), then SIGCONT',
    endsTerm: true,
    boundFormula: 'L + J·R + H + S',
    reasoning: 'as a crash: renewals stop with the process',
  },
  'event-loop-block': {
    kind: 'event-loop-block',
    action: "block the leader's event loop for L + 1 s (POST /debug/block-event-loop)",
    endsTerm: true,
    boundFormula: 'L + J·R + H + S',
    reasoning: 'as a crash: no timers, no renewals while blocked',
  },
  'partition-blackhole': {
    kind: 'partition-blackhole',
    action:
      "blackhole the leader's link (toxiproxy timeout 0, both ways) until a follower took over (+ 0.25 s; L to L + 1 s)",
    endsTerm: true,
    boundFormula: 'L − D + J·R + H + S',
    reasoning:
      'the leader works until renewDeadline after its last renewal; followers take over leaseDuration after seeing it',
  },
  'partition-reset': {
    kind: 'partition-reset',
    action:
      "reset every connection on the leader's link (toxiproxy reset_peer) until a follower took over (+ 0.25 s; L to L + 1 s)",
    endsTerm: true,
    boundFormula: 'L − D + J·R + H + S',
    reasoning: 'as a blackhole: requests fail at once instead of hanging',
  },
  'slow-close': {
    kind: 'slow-close',
    action:
      "cut the leader's connections after 1 byte and delay their close (limit_data + slow_close) until a follower took over (+ 0.25 s; L to L + 1 s)",
    endsTerm: true,
    boundFormula: 'L − D + J·R + H + S',
    reasoning: 'connections hang instead of failing; the step-down timer does not wait for them',
  },
  'latency-near': {
    kind: 'latency-near',
    action:
      "add 0.1875 × D of latency to the leader's answers for L + 2 R: a renewal on a fresh TLS connection (two round trips) then uses 75 % of the documented allowance max(R, r) + r < D",
    endsTerm: false,
    boundFormula: 'L − D + J·R + H + S (no transition expected)',
    reasoning: 'every renewal completes within the per-request timeout: the leader keeps leading',
  },
  'latency-past': {
    kind: 'latency-past',
    action:
      "add D + 0.5 s of latency to the leader's link until a follower took over (+ 0.25 s; L to L + 1 s)",
    endsTerm: true,
    boundFormula: 'L − D + J·R + H + S',
    reasoning: 'no renewal completes: as a partition',
  },
  'apiserver-restart': {
    kind: 'apiserver-restart',
    action: 'restart kube-apiserver + etcd (same data)',
    endsTerm: false,
    boundFormula: 'max(Δ + (1 + J)·R − D + A, L − D + J·R) + H + S',
    reasoning:
      'the leader steps down if the outage outlasts renewDeadline; after it, the first successful attempt comes within J·R plus the RBAC warm-up',
  },
  'apiserver-down': {
    kind: 'apiserver-down',
    action:
      'stop kube-apiserver + etcd for L + 0.5 s, then start it (down ≈ L + 0.5 s + its start)',
    endsTerm: true,
    boundFormula: 'max(Δ + (1 + J)·R − D + A, L − D + J·R) + H + S',
    reasoning: 'as a restart, with an outage longer than the lease',
  },
  'conflict-storm': {
    kind: 'conflict-storm',
    action: "a foreign writer updates the Lease's labels every 50 ms; SIGKILL the leader under it",
    endsTerm: true,
    boundFormula: 'L + 2·J·R + H + S',
    reasoning:
      'label writes are not renewals: expiry is judged on the election record; one attempt may lose a 409 race',
  },
  'foreign-writer': {
    kind: 'foreign-writer',
    action: "a foreign writer updates the Lease's labels every 0.75 L; SIGKILL the leader under it",
    endsTerm: true,
    boundFormula: 'L + 2·J·R + H + S',
    reasoning: 'as the storm, with a writer that lands once in every lease',
  },
  'lease-deleted': {
    kind: 'lease-deleted',
    action: 'delete the Lease under the live leader',
    endsTerm: true,
    boundFormula: 'L + J·R + H + S',
    reasoning:
      'the leader steps down at its next renewal; a follower recreates the Lease leaseDuration after it last saw the holder',
  },
  'same-identity': {
    kind: 'same-identity',
    action:
      "start a second process with the leader's identity, let it run L + R once up, then SIGKILL it",
    endsTerm: false,
    boundFormula: 'L + J·R + H + S',
    reasoning: 'if the leader yields to its namesake, the namesake leads at once',
  },
};

/**
 * The longest leaderless gap a fault of `kind` may cause, ms (formulas in {@link FAULT_SPECS}).
 * @param measured - run-time figures the bound depends on (API downtime)
 */
export function gapBoundMs(
  kind: FaultKind | 'startup',
  t: ChaosTimings,
  allowances: BoundAllowances = DEFAULT_ALLOWANCES,
  measured: FaultMeasurements = {},
): number {
  const L = t.leaseDurationMs;
  const D = t.renewDeadlineMs;
  const R = t.retryPeriodMs;
  const J = RETRY_JITTER;
  const H = t.heartbeatMs;
  const S = allowances.slackMs;
  const A = allowances.apiWarmupMs;
  const crash = L + J * R + H + S;
  const link = L - D + J * R + H + S;
  switch (kind) {
    case 'startup':
    case 'sigkill':
    case 'sigstop':
    case 'event-loop-block':
    case 'lease-deleted':
    case 'same-identity':
      return crash;
    case 'sigterm':
      return J * R + DRAIN_MS + H + S;
    case 'partition-blackhole':
    case 'partition-reset':
    case 'slow-close':
    case 'latency-near':
    case 'latency-past':
      return link;
    case 'apiserver-restart':
    case 'apiserver-down': {
      const downtime = measured.apiDowntimeMs ?? 0;
      return Math.max(downtime + (1 + J) * R - D + A, L - D + J * R) + H + S;
    }
    case 'conflict-storm':
    case 'foreign-writer':
      return L + 2 * J * R + H + S;
  }
}
