/**
 * The chaos harness's judge: reads what every replica process actually did (its event log,
 * wall-clock times from one host) plus the harness's own records (faults, probes, exits) and
 * lists the terms, the transitions with their leaderless gaps, and every violation of:
 * - safety: two terms whose work overlaps in time; leader-only work after its term ended; a
 *   term token (`leaseTransitions`) that does not increase;
 * - liveness: a gap longer than the bound of the fault that caused it; a crashed replica; a
 *   liveness probe failing while nothing excuses it; a replica that answers healthy while it
 *   is wedged. Pure: no I/O.
 */
import type { DemoEvent, LeaderWorkEvent } from '@nest-leader/demo/demo-events';
import { overlappingSpans } from '@nest-leader/demo/leadership-overlaps';
import { type FaultKind, LEASE_DELETED_AT } from './fault-kinds.js';
import type { PodFaultKind } from './pod-fault-kinds.js';
import type { ShardFaultKind } from './sharded-fault-kinds.js';

/**
 * A fault of any mode: process-level (`pnpm chaos`), pod-level (`--cluster`) or per member of a
 * sharded election (`--sharded`).
 */
export type ChaosFaultKind = FaultKind | PodFaultKind | ShardFaultKind;

/** One replica process's log and fate. Times are wall-clock ms (`Date.now()` scale). */
export interface ProcessLog {
  /** Unique per process: `<identity>#<n>`. */
  instance: string;
  identity: string;
  /** Row in the picture: the replica slot (the duplicate-identity slot included). */
  slot: number;
  pid?: number;
  events: readonly DemoEvent[];
  /** When the harness received each event (wall-clock ms, same order): for diagnosis only. */
  receivedAt?: readonly number[];
  spawnedAt: number;
  /** When the harness sent it SIGTERM/SIGKILL (probe failures after that are expected). */
  stoppingAt?: number;
  exit?: ProcessExit;
}

/** How a process ended. */
export interface ProcessExit {
  at: number;
  code: number | null;
  signal: string | null;
  /** True when the harness killed or stopped it (a fault, or the end of the run). */
  expected: boolean;
}

/** One fault as the harness applied it. */
export interface FaultRecord {
  round: number;
  kind: ChaosFaultKind;
  /** The process it targeted (the leader's instance), if any. */
  target?: string;
  startAt: number;
  /** When the harness finished applying and healing it. */
  endAt: number;
  /** Longest leaderless gap it may cause, ms. */
  boundMs: number;
  /** Processes that may not answer probes in [startAt, endAt + recoveryMs]; 'all' for API faults. */
  unresponsive: readonly string[] | 'all';
  /** Processes (or 'all') whose view of the Lease may lag in [startAt, endAt + recoveryMs]. */
  blind: readonly string[] | 'all';
  /** Extra figures (API downtime…). */
  measurements?: Record<string, number>;
  /** Harness-level problems in this round (no leader in time…), already violations. */
  notes?: string[];
  /**
   * For a fault that must keep the leader (a bad deploy, a node component's restart): the
   * longest leader work may pause in [startAt, endAt], ms, from the last work line before the
   * round (`work-paused`); `undefined`: not judged.
   */
  workPauseBoundMs?: number;
}

/** One probe of one process: GET /healthz and GET /leader. */
export interface ProbeSample {
  instance: string;
  at: number;
  /** HTTP status of /healthz, or 'timeout' / 'error' when it did not answer. */
  healthz: number | 'timeout' | 'error';
  /** GET /leader, when it answered. */
  leader?: { isLeader: boolean; leaseTransitions: number | null };
}

/** Thresholds of the liveness checks, ms. */
export interface LivenessRules {
  /** Consecutive failed probes that count as a failing liveness probe (kubelet's failureThreshold). */
  failureThreshold: number;
  /** Extra time after a fault's end during which its effects are excused. */
  recoveryMs: number;
  /** A follower may lag the newest term by this long before it counts as wedged. */
  lagBoundMs: number;
  /** A replica may claim to lead this long after a newer term began. */
  staleLeaderMs: number;
}

export interface ChaosInput {
  processes: readonly ProcessLog[];
  faults: readonly FaultRecord[];
  probes: readonly ProbeSample[];
  /** Bound for gaps before the first fault (the initial election). */
  startupBoundMs: number;
  liveness: LivenessRules;
  /** When the election began (every first replica listening) and the run ended (wall ms). */
  startedAt: number;
  endedAt: number;
  /**
   * A leader-only recurring job with a catch-up policy of `'all'` (the demo's `dispatch-jobs`):
   * its work lines must carry their `slot` (rule `run-without-slot`), and every slot from the
   * first to the last must have begun at least once (rule `slot-lost`) — the library's docs/schedule-ledger.md
   * guarantee — except a slot at which no leader was live, from the slot's time to `horizonMs`
   * after it, and a slot at which the ledger was gone (a `lease-deleted` fault's deletion, to
   * the start of the next term).
   */
  scheduledJob?: { task: LeaderWorkEvent['task']; periodMs: number; horizonMs: number };
}

/** One term as the logs show it. */
export interface TermRecord {
  instance: string;
  identity: string;
  slot: number;
  token: number;
  acquiredAt?: number;
  lostAt?: number;
  firstWorkAt?: number;
  lastWorkAt?: number;
  workLines: number;
  /** acquiredAt, or the first work line. */
  start: number;
  /** The last work line (what it actually did), or `start` without work. */
  end: number;
}

/** One change of leadership and the leaderless gap before it. */
export interface TransitionRecord {
  from?: { instance: string; token: number };
  to: { instance: string; token: number };
  at: number;
  /** Leaderless time before `to` started, ms (0 when the new term started before the old ended). */
  gapMs: number;
  gapStartAt: number;
  /** The fault of the round in which the new term began, or 'startup'. */
  cause: ChaosFaultKind | 'startup';
  round: number;
  boundMs: number;
}

export type ViolationKind =
  | 'slot-lost'
  | 'run-without-slot'
  | 'overlapping-terms'
  | 'work-after-term-ended'
  | 'token-not-increasing'
  | 'gap-too-long'
  | 'unexpected-transition'
  | 'work-paused'
  | 'round-problem'
  | 'crashed'
  | 'liveness-failing'
  | 'healthy-while-wedged';

export interface Violation {
  kind: ViolationKind;
  at: number;
  round?: number;
  message: string;
}

export interface ChaosVerdict {
  terms: TermRecord[];
  transitions: TransitionRecord[];
  violations: Violation[];
  /**
   * Acquisition lines written after their term had ended (`live: false`): no span, no violation
   * (no work was done under them), counted so a run shows how often a pause fell there.
   */
  lateAnnouncements: number;
  /** The scheduled job's slots (with `scheduledJob`): due, begun late, begun twice, excused. */
  slots?: SlotFigures;
}

/** What happened to the slots of the input's `scheduledJob`. */
export interface SlotFigures {
  due: number;
  /** Slots whose first run began within one period of the slot. */
  onTime: number;
  /** Slots whose first run began more than one period after the slot (a catch-up). */
  late: number;
  /** Slots that began more than once (a redo, or a run before and after a failover). */
  begunTwice: number;
  /** Of those, slots begun again under a later term's token (a new leader's redo). */
  redone: number;
  /** Missing slots excused: no leader live from the slot to its horizon, or the ledger gone. */
  excused: number;
  lost: number;
}

/**
 * The fault that deletes the Lease, and the schedule ledger on it (a foreign writer only
 * relabels the Lease: its writes keep the annotation that holds the ledger).
 */
const LEDGER_LOSING_FAULT: FaultKind = 'lease-deleted';

/** Faults that must not move the leader, and how a transition during one is described. */
const KEEPS_LEADER: Partial<Record<ChaosFaultKind, string>> = {
  'latency-near': 'under latency the elector should tolerate',
  'scale-unstarted': 'while pods that never started were scaled away',
  'kubelet-restart': 'while the kubelet restarted under running pods',
  'containerd-restart': 'while containerd restarted under running containers',
  'bad-deploy-unpullable': 'to a template whose image cannot be pulled',
  'bad-deploy-crashloop': 'to a template whose pods crash after they advertise',
  'bad-deploy-unhealthy': 'to a template whose pods never become healthy',
};

const iso = (ms: number) => new Date(ms).toISOString();

function isWork(event: DemoEvent): event is LeaderWorkEvent {
  return event.event === 'leader-work';
}

/**
 * Every term found in the logs, ordered by start. A `leadership-acquired` line opens a term of
 * its process (even one with a token that process had before: a repeated token is itself a
 * violation, not the same term); work lines and `leadership-lost` belong to the latest term of
 * their process with their token.
 */
export function collectTerms(processes: readonly ProcessLog[]): TermRecord[] {
  const list: TermRecord[] = [];
  for (const p of processes) {
    const latest = new Map<number, TermRecord>();
    const open = (token: number): TermRecord => {
      const term: TermRecord = {
        instance: p.instance,
        identity: p.identity,
        slot: p.slot,
        token,
        workLines: 0,
        start: Infinity,
        end: -Infinity,
      };
      latest.set(token, term);
      list.push(term);
      return term;
    };
    for (const event of p.events) {
      const at = Date.parse(event.at);
      if (event.event === 'leadership-acquired') {
        const term = open(event.leaseTransitions);
        // Written after its term had ended (a pause between the library's check and the line;
        // see `LeadershipAcquiredEvent.live`): it proves no live moment, so it starts no span.
        // The term's work lines still do, and each carries its own check.
        if (event.live !== false) term.acquiredAt = at;
      } else if (event.event === 'leadership-lost') {
        const term = latest.get(event.leaseTransitions) ?? open(event.leaseTransitions);
        term.lostAt ??= at;
      } else if (isWork(event)) {
        const term = latest.get(event.leaseTransitions) ?? open(event.leaseTransitions);
        term.workLines += 1;
        term.firstWorkAt = Math.min(term.firstWorkAt ?? Infinity, at);
        term.lastWorkAt = Math.max(term.lastWorkAt ?? -Infinity, at);
      }
    }
  }
  const terms = list.filter((t) => t.acquiredAt !== undefined || t.firstWorkAt !== undefined);
  for (const t of terms) {
    t.start = Math.min(t.acquiredAt ?? Infinity, t.firstWorkAt ?? Infinity);
    t.end = t.lastWorkAt ?? t.start;
  }
  return terms.sort((a, b) => a.start - b.start || a.token - b.token);
}

/** The round (fault) whose window [startAt, next round's startAt) contains `at`. */
function roundAt(faults: readonly FaultRecord[], at: number): FaultRecord | undefined {
  let found: FaultRecord | undefined;
  for (const f of faults) {
    if (f.startAt <= at) found = f;
    else break;
  }
  return found;
}

function excused(
  faults: readonly FaultRecord[],
  instance: string,
  at: number,
  recoveryMs: number,
  field: 'unresponsive' | 'blind',
  fromAt = at,
): boolean {
  return faults.some((f) => {
    const who = f[field];
    const affects = who === 'all' || who.includes(instance);
    return affects && f.startAt <= at && fromAt <= f.endAt + recoveryMs;
  });
}

/** Judges a chaos run. */
/** How {@link checkChaosRun} judges gaps. */
export interface GapRules {
  /**
   * `new-term-round` (default): the bound of the round the new term began in — right for the
   * election the faults target, since a round starts only under its working leader.
   * `overlapping-rounds`: the largest bound of every round the gap overlaps — for another
   * election in the same replicas, whose gap may begin in one round and end in the next.
   */
  attribution?: 'new-term-round' | 'overlapping-rounds';
  /** Added to every bound, ms: e.g. a coarser work log than the heartbeat. */
  extraMs?: number;
}

/** The bound and cause of a gap from `fromAt` to `toAt`. */
function gapBound(
  faults: readonly FaultRecord[],
  fromAt: number,
  toAt: number,
  startupBoundMs: number,
  rules: GapRules,
): { fault: FaultRecord | undefined; boundMs: number } {
  const extraMs = rules.extraMs ?? 0;
  const fault = roundAt(faults, toAt);
  if (rules.attribution !== 'overlapping-rounds') {
    return { fault, boundMs: (fault?.boundMs ?? startupBoundMs) + extraMs };
  }
  let boundMs = roundAt(faults, fromAt) ? 0 : startupBoundMs;
  let widest = fault;
  for (let i = 0; i < faults.length; i++) {
    const f = faults[i]!;
    const endAt = faults[i + 1]?.startAt ?? Infinity;
    if (f.startAt <= toAt && fromAt < endAt && f.boundMs >= boundMs) {
      boundMs = f.boundMs;
      widest = f;
    }
  }
  return { fault: widest, boundMs: boundMs + extraMs };
}

/**
 * `work-paused`: in each round with a `workPauseBoundMs`, the longest stretch without a leader
 * work line of any process, from the last one before the round began to the round's end.
 */
function checkWorkPauses(
  processes: readonly ProcessLog[],
  faults: readonly FaultRecord[],
): Violation[] {
  const judged = faults.filter((f) => f.workPauseBoundMs !== undefined);
  if (judged.length === 0) return [];
  const workAt = processes
    .flatMap((p) => p.events.filter(isWork).map((e) => Date.parse(e.at)))
    .sort((a, b) => a - b);
  const violations: Violation[] = [];
  for (const f of judged) {
    const before = workAt.filter((at) => at <= f.startAt).at(-1) ?? f.startAt;
    const points = [before, ...workAt.filter((at) => at > f.startAt && at <= f.endAt), f.endAt];
    let longest = { fromAt: before, ms: 0 };
    for (let i = 1; i < points.length; i++) {
      const ms = points[i]! - points[i - 1]!;
      if (ms > longest.ms) longest = { fromAt: points[i - 1]!, ms };
    }
    if (longest.ms > f.workPauseBoundMs!) {
      violations.push({
        kind: 'work-paused',
        at: longest.fromAt,
        round: f.round,
        message:
          `no leader work for ${Math.round(longest.ms)} ms from ${iso(longest.fromAt)} during ` +
          `${f.kind}, over its ${Math.round(f.workPauseBoundMs!)} ms bound (the leader must be kept, working)`,
      });
    }
  }
  return violations;
}

export function checkChaosRun(input: ChaosInput, rules: GapRules = {}): ChaosVerdict {
  const faults = [...input.faults].sort((a, b) => a.startAt - b.startAt);
  const terms = collectTerms(input.processes);
  const violations: Violation[] = [];
  const label = (t: TermRecord) => `term ${t.token} of ${t.instance}`;

  // Safety 1: no two terms' work overlaps (each from its acquisition to its last work line;
  // log times are whole ms, so touching terms overlap). Each later term is reported once,
  // against the earlier term that worked longest.
  // Every term is its own owner: a process's old term working into its new one overlaps too.
  const ownerOf = new Map(terms.map((term, i) => [term, String(i)]));
  const spanOf = (term: TermRecord) => ({
    owner: ownerOf.get(term)!,
    startMs: term.start,
    endMs: term.end,
  });
  const widestBefore = new Map<TermRecord, TermRecord>();
  for (const [earlier, later] of overlappingSpans(terms, spanOf, 'overlap')) {
    const widest = widestBefore.get(later);
    if (!widest || earlier.end > widest.end) widestBefore.set(later, earlier);
  }
  for (const [term, widest] of widestBefore) {
    violations.push({
      kind: 'overlapping-terms',
      at: term.start,
      round: roundAt(faults, term.start)?.round,
      message:
        `${label(widest)} worked until ${iso(widest.end)}, but ${label(term)} began at ` +
        `${iso(term.start)} (${Math.round(widest.end - term.start)} ms of overlap)`,
    });
  }

  // Safety 2: each term's token is greater than the token of the term before it (one
  // violation per reset or repeat, not one for every later term).
  for (let i = 1; i < terms.length; i++) {
    const before = terms[i - 1]!;
    const term = terms[i]!;
    if (term.token <= before.token) {
      violations.push({
        kind: 'token-not-increasing',
        at: term.start,
        round: roundAt(faults, term.start)?.round,
        message: `${label(term)} began at ${iso(term.start)} after ${label(before)}: its token does not increase`,
      });
    }
  }

  // Safety 3: no leader work after the term ended, by the replica's own account: a work line
  // after its term's `leadership-lost`, or one its elector's call-time check did not back.
  for (const p of input.processes) {
    const lost = new Set<number>();
    for (const e of p.events) {
      if (e.event === 'leadership-acquired') lost.delete(e.leaseTransitions);
      else if (e.event === 'leadership-lost') lost.add(e.leaseTransitions);
      if (!isWork(e)) continue;
      const at = Date.parse(e.at);
      if (lost.has(e.leaseTransitions) || e.live === false) {
        violations.push({
          kind: 'work-after-term-ended',
          at,
          round: roundAt(faults, at)?.round,
          message: lost.has(e.leaseTransitions)
            ? `${p.instance} did ${e.task} in term ${e.leaseTransitions} at ${e.at}, after it logged that term's end`
            : `${p.instance} did ${e.task} in term ${e.leaseTransitions} at ${e.at} although its elector no longer counted that term as live`,
        });
      }
    }
  }

  // Transitions and leaderless gaps, each judged by the bound of the fault it began under.
  const transitions: TransitionRecord[] = [];
  let coveredUntil: number | undefined;
  let previous: TermRecord | undefined;
  for (const term of terms) {
    const gapStartAt = coveredUntil ?? input.startedAt;
    const gapMs = Math.max(0, term.start - gapStartAt);
    // By default the round the new term began in: a round starts only under a working leader,
    // so the gap belongs to that round's fault (its last heartbeat may predate the round).
    const { fault, boundMs } = gapBound(
      faults,
      gapStartAt,
      term.start,
      input.startupBoundMs,
      rules,
    );
    const transition: TransitionRecord = {
      from: previous && { instance: previous.instance, token: previous.token },
      to: { instance: term.instance, token: term.token },
      at: term.start,
      gapMs,
      gapStartAt,
      cause: fault?.kind ?? 'startup',
      round: fault?.round ?? 0,
      boundMs,
    };
    transitions.push(transition);
    if (gapMs > boundMs) {
      violations.push({
        kind: 'gap-too-long',
        at: term.start,
        round: transition.round,
        message:
          `no leader for ${Math.round(gapMs)} ms before ${label(term)} (from ${iso(gapStartAt)}), ` +
          `over the ${Math.round(boundMs)} ms bound of ${transition.cause}`,
      });
    }
    // Latency near the limit, or a scale-down of pods that never started, must not move the
    // leader: a new term that began under it counts, unless the old term had stopped working
    // before the round began — then an earlier fault ended it (the demo's second election,
    // whose failovers are not waited for between rounds, can finish one inside the next round).
    const during = roundAt(faults, term.start);
    const keeps = during && KEEPS_LEADER[during.kind];
    if (keeps && previous && term.start <= during.endAt && gapStartAt >= during.startAt) {
      violations.push({
        kind: 'unexpected-transition',
        at: term.start,
        round: during.round,
        message: `leadership moved to ${label(term)} ${keeps}`,
      });
    }
    coveredUntil = Math.max(coveredUntil ?? -Infinity, term.end);
    previous = term;
  }

  violations.push(...checkWorkPauses(input.processes, faults));

  for (const f of faults) {
    for (const note of f.notes ?? []) {
      violations.push({ kind: 'round-problem', at: f.endAt, round: f.round, message: note });
    }
  }

  // Liveness: crashes, failing probes nothing excuses, healthy-but-wedged replicas.
  for (const p of input.processes) {
    if (p.exit && !p.exit.expected) {
      violations.push({
        kind: 'crashed',
        at: p.exit.at,
        round: roundAt(faults, p.exit.at)?.round,
        message: `${p.instance} exited on its own (code ${p.exit.code}, signal ${p.exit.signal}) at ${iso(p.exit.at)}`,
      });
    }
  }
  const { failureThreshold, recoveryMs, lagBoundMs, staleLeaderMs } = input.liveness;
  const byInstance = new Map<string, ProbeSample[]>();
  for (const s of input.probes) {
    const list = byInstance.get(s.instance) ?? [];
    list.push(s);
    byInstance.set(s.instance, list);
  }
  const processOf = new Map(input.processes.map((p) => [p.instance, p]));
  const electorStartedAt = new Map(
    input.processes.map((p) => {
      const started = p.events.find((e) => e.event === 'replica-started');
      return [p.instance, started ? Date.parse(started.at) : p.spawnedAt];
    }),
  );
  for (const [instance, samples] of byInstance) {
    samples.sort((a, b) => a.at - b.at);
    const p = processOf.get(instance);
    let failing: ProbeSample[] = [];
    let reported = false;
    for (const s of samples) {
      const stopping = p?.stoppingAt !== undefined && s.at >= p.stoppingAt;
      const ok = s.healthz === 200;
      if (ok || stopping || excused(faults, instance, s.at, recoveryMs, 'unresponsive')) {
        failing = [];
        reported = false;
        continue;
      }
      failing.push(s);
      if (failing.length >= failureThreshold && !reported) {
        reported = true;
        violations.push({
          kind: 'liveness-failing',
          at: s.at,
          round: roundAt(faults, s.at)?.round,
          message: `${instance}: /healthz failed ${failing.length} probes in a row (${failing.map((f) => f.healthz).join(', ')}) from ${iso(failing[0]!.at)} with no fault on it`,
        });
      }
    }
    const reportedWedges = new Set<string>();
    const ownTerms = terms.filter((t) => t.instance === instance);
    for (const s of samples) {
      if (s.healthz !== 200 || !s.leader) continue;
      if (p?.stoppingAt !== undefined && s.at >= p.stoppingAt) continue;
      const seen = s.leader.leaseTransitions;
      if (s.leader.isLeader) {
        // Claims to lead although another term began after its own, staleLeaderMs ago or more.
        const own = ownTerms.filter((t) => t.token === seen && t.start <= s.at).at(-1);
        const newer =
          own &&
          terms.find((t) => t !== own && t.start > own.start && t.start < s.at - staleLeaderMs);
        const key = `lead/${own?.start}`;
        if (own && newer && !reportedWedges.has(key)) {
          reportedWedges.add(key);
          violations.push({
            kind: 'healthy-while-wedged',
            at: s.at,
            round: roundAt(faults, s.at)?.round,
            message: `${instance} answered isLeader: true (term ${seen}) at ${iso(s.at)}, ${Math.round(s.at - newer.start)} ms after ${label(newer)} began`,
          });
        }
        continue;
      }
      // A healthy follower must have seen the term that began lagBoundMs ago, or a later one —
      // once its elector has run for lagBoundMs: it starts with the app (the `replica-started`
      // line), and a boot on a loaded machine took 15–20 s after the spawn (long run seed 3301).
      const cutoff = s.at - lagBoundMs;
      if (cutoff < (electorStartedAt.get(instance) ?? -Infinity)) continue;
      const due = terms.filter((t) => t.start < cutoff && t.start >= (p?.spawnedAt ?? 0)).at(-1);
      if (!due) continue;
      // Any term from `due` on: the answer may already show a term begun after the probe was sent.
      const acceptable = terms.filter((t) => t.start >= due.start);
      if (acceptable.some((t) => t.token === seen)) continue;
      if (excused(faults, instance, s.at, recoveryMs, 'blind', due.start)) continue;
      const key = `lag/${due.start}`;
      if (reportedWedges.has(key)) continue;
      reportedWedges.add(key);
      violations.push({
        kind: 'healthy-while-wedged',
        at: s.at,
        round: roundAt(faults, s.at)?.round,
        message: `${instance} answered healthy at ${iso(s.at)} but still saw token ${seen}, ${Math.round(s.at - due.start)} ms after ${label(due)} began`,
      });
    }
  }
  const slots = input.scheduledJob && checkSlots(input, terms, faults, violations);
  violations.sort((a, b) => a.at - b.at);
  const lateAnnouncements = input.processes
    .flatMap((p) => p.events)
    .filter((e) => e.event === 'leadership-acquired' && e.live === false).length;
  return { terms, transitions, violations, lateAnnouncements, ...(slots && { slots }) };
}

/**
 * Rules `slot-lost` and `run-without-slot`. Every slot of the scheduled job from the first
 * begun to the last begun has begun at least once (docs/schedule-ledger.md's guarantee under catch-up
 * `'all'`), unless no leader was live at any time from the slot to `horizonMs` after it (a
 * term live at the slot runs it on time; one that began within the horizon catches it up), or
 * the ledger was gone at the slot: from a `lease-deleted` fault's deletion (its
 * {@link LEASE_DELETED_AT} measurement, else the round's start) to the start of the first term
 * after it, which began on a Lease without the ledger. A run of the job whose line carries no
 * slot cannot be judged, and is itself a violation.
 */
function checkSlots(
  input: ChaosInput,
  terms: readonly TermRecord[],
  faults: readonly FaultRecord[],
  violations: Violation[],
): SlotFigures {
  const { task, periodMs, horizonMs } = input.scheduledJob!;
  const firstBegun = new Map<number, number>();
  const tokens = new Map<number, number[]>();
  for (const p of input.processes) {
    for (const event of p.events) {
      if (!isWork(event) || event.task !== task) continue;
      const at = Date.parse(event.at);
      if (event.slot === undefined) {
        violations.push({
          kind: 'run-without-slot',
          at,
          round: roundAt(faults, at)?.round,
          message: `${p.instance} ran ${task} in term ${event.leaseTransitions} at ${event.at} with no slot on its line`,
        });
        continue;
      }
      const slot = Date.parse(event.slot);
      tokens.set(slot, [...(tokens.get(slot) ?? []), event.leaseTransitions]);
      firstBegun.set(slot, Math.min(firstBegun.get(slot) ?? Infinity, at));
    }
  }
  const figures: SlotFigures = {
    due: 0,
    onTime: 0,
    late: 0,
    begunTwice: 0,
    redone: 0,
    excused: 0,
    lost: 0,
  };
  if (tokens.size === 0) return figures;
  const ledgerLost = faults
    .filter((f) => f.kind === LEDGER_LOSING_FAULT)
    .map((f) => {
      const fromAt = f.measurements?.[LEASE_DELETED_AT] ?? f.startAt;
      const next = terms.find((t) => t.start > fromAt);
      return { fromAt, untilAt: next?.start ?? Infinity };
    });
  const first = Math.min(...tokens.keys());
  const last = Math.max(...tokens.keys());
  for (let slot = first; slot <= last; slot += periodMs) {
    figures.due += 1;
    const runs = tokens.get(slot) ?? [];
    if (runs.length > 1) figures.begunTwice += 1;
    if (new Set(runs).size > 1) figures.redone += 1;
    if (runs.length > 0) {
      if (firstBegun.get(slot)! - slot > periodMs) figures.late += 1;
      else figures.onTime += 1;
      continue;
    }
    const leaderLive = terms.some((t) => t.start <= slot + horizonMs && t.end >= slot);
    const ledgerGone = ledgerLost.some((l) => l.fromAt <= slot && slot <= l.untilAt);
    if (!leaderLive || ledgerGone) {
      figures.excused += 1;
      continue;
    }
    figures.lost += 1;
    const live = terms.find((t) => t.start <= slot && t.end >= slot);
    const next = terms.find((t) => t.start > slot && t.start <= slot + horizonMs);
    violations.push({
      kind: 'slot-lost',
      at: slot,
      round: roundAt(faults, slot)?.round,
      message:
        `slot ${iso(slot)} of ${task} never began (catch-up 'all'), although ` +
        (live
          ? `term ${live.token} of ${live.instance} was live at it`
          : `term ${next!.token} of ${next!.instance} began ${Math.round(next!.start - slot)} ms after it, within the ${horizonMs} ms horizon`),
    });
  }
  return figures;
}
