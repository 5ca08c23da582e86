/**
 * Prometheus metrics of leader election, as an {@link ElectionObserver}: client-go's
 * `leader_election_master_status` and `leader_election_slowpath_total` under their names, and
 * ours beside them, every one labelled with the election's `name`. Framework-free; prom-client
 * (an optional peer dependency) is loaded when the first observer is constructed.
 */
import { HolderLabelValues } from './holder-label.js';
import type { LeaderTermEndReason } from '../errors.js';
import { type Clock, SystemClock } from '../core/clock.js';
import type {
  ElectionObservation,
  ElectionObserver,
  LeadershipChangeReason,
  LockRequestOutcome,
} from '../core/election-observer.js';
import type { LeaderTerm } from '../core/leader-elector.options.js';
import type { LockOperation } from '../locks/resource-lock.js';
import type {
  CandidateSnapshot,
  CandidateSource,
  LeaderOnlyCallTally,
  ScheduleSlotCounter,
  PrometheusRegistry,
} from './election-metrics.interfaces.js';
import { type ElectionMetrics, electionMetricsFor } from './election-metrics.js';
import { loadPromClient } from './prom-client.loader.js';

/** Options of {@link PrometheusElectionObserver}. */
export interface PrometheusElectionObserverOptions {
  /**
   * Where to register the metrics: a prom-client 15 `Registry`, e.g. the one
   * `@willsoto/nestjs-prometheus` serves on `/metrics`. Default: prom-client's global `register`.
   * Every observer of one registry shares one set of metrics, so several observers (elections,
   * applications in one process) never register a name twice.
   */
  registry?: PrometheusRegistry;
  /** Monotonic time for `leader_election_time_since_last_renew_seconds`; default `SystemClock`. */
  clock?: Pick<Clock, 'nowMs'>;
}

/**
 * Every reason a term ends (a record, so a reason added to `LeaderTermEndReason` fails to
 * compile here); their counters start at 0 so that `increase()` sees the first one.
 */
const TERM_END_REASONS = Object.keys({
  stopped: true,
  'handed-off': true,
  'renew-deadline-exceeded': true,
  'lease-taken-over': true,
  'lease-deleted': true,
  'election-failed': true,
} satisfies Record<LeaderTermEndReason, true>) as LeaderTermEndReason[];

/** Every reason a term starts (as {@link TERM_END_REASONS}); their counters start at 0 too. */
const TERM_START_REASONS = Object.keys({
  handoff: true,
  preferred: true,
  release: true,
  expired: true,
  created: true,
} satisfies Record<LeadershipChangeReason, true>) as LeadershipChangeReason[];

/** What the observer remembers of one candidate (one elector) between events. */
interface CandidateState {
  election: string;
  leading: boolean;
  /** Monotonic ms of the last successful acquire or renew of the live term. */
  lastRenewMs?: number;
  /** The holder last observed; `undefined` before the first observation. */
  holder?: string;
  /** Its `holder` label value (see `holder-label.ts`); `undefined` while the Lease is free. */
  holderLabel?: string;
  /** leaseTransitions at that observation. */
  leaseTransitions?: number;
}

/**
 * Pass it as the elector's `observer` (or through the Nest module's metrics option). Metrics,
 * all labelled `name` (the election's name; see the package's docs/observability.md for the full reference):
 *
 * - `leader_election_master_status` gauge — 1 while this process leads (client-go's);
 * - `leader_election_slowpath_total` counter — renewals that fell back to GET + decide (client-go's);
 * - `leader_election_transitions_total` counter — holder changes observed;
 * - `leader_election_terms_started_total{reason}` counter — terms begun, by how the Lease came
 *   (handoff, preferred, release, expired, created: see {@link LeadershipChangeReason});
 * - `leader_election_terms_ended_total{reason}` counter;
 * - `leader_election_leadership_duration_seconds` histogram — term lengths;
 * - `leader_election_lock_request_duration_seconds{operation,outcome}` histogram;
 * - `leader_election_lock_errors_total{operation,kind}` counter;
 * - `leader_election_time_since_last_renew_seconds` gauge — while leading;
 * - `leader_election_observed_leader_info{holder}` gauge — always 1;
 * - `leader_election_leader_only_calls_total{handler,outcome}` counter — `@LeaderOnly()` calls.
 * - `leader_election_schedule_slots_total{job,outcome}` counter — slots of leader-only scheduled
 *   jobs: on time, caught up, redone, skipped, expired.
 *
 * Every label has a bounded set of values. The holder label has one value at a time per
 * candidate, and a peer cannot grow its values without bound: a holderIdentity that is not a
 * plain name (letters, digits, `.`, `_`, `-`; at most 253 characters), or a 17th new name within
 * an hour, is shown as `(other)` (see `HOLDER_LABEL_LIMITS`). Call {@link close} when the elector is done, so its candidate leaves the gauges.
 *
 * @throws MissingPeerDependencyError (constructor) if prom-client is not installed.
 * @throws InvalidLeaderElectionOptionError (constructor, option `registry`) if `registry` is not
 *   a registry or already holds one of these names registered by someone else.
 */
export class PrometheusElectionObserver implements ElectionObserver, CandidateSource {
  private readonly metrics: ElectionMetrics;
  private readonly clock: Pick<Clock, 'nowMs'>;
  private readonly candidates = new Map<string, CandidateState>();
  private readonly holderLabels = new HolderLabelValues();
  private closed = false;

  constructor(options: PrometheusElectionObserverOptions = {}) {
    const client = loadPromClient('PrometheusElectionObserver');
    this.metrics = electionMetricsFor(options.registry ?? client.register, client);
    this.clock = options.clock ?? new SystemClock();
    this.metrics.attach(this);
  }

  /** @inheritdoc */
  termStarted(
    event: ElectionObservation & { term: LeaderTerm; reason: LeadershipChangeReason },
  ): void {
    const candidate = this.candidate(event);
    if (!candidate) return;
    candidate.leading = true;
    candidate.lastRenewMs = this.clock.nowMs();
    this.metrics.termsStarted.inc({ name: event.election, reason: event.reason });
  }

  /** @inheritdoc */
  termEnded(
    event: ElectionObservation & {
      term: LeaderTerm;
      reason: LeaderTermEndReason;
      durationMs: number;
    },
  ): void {
    const candidate = this.candidate(event);
    if (!candidate) return;
    candidate.leading = false;
    candidate.lastRenewMs = undefined;
    this.metrics.termsEnded.inc({ name: event.election, reason: event.reason });
    this.metrics.leadershipDuration.observe({ name: event.election }, event.durationMs / 1000);
  }

  /** @inheritdoc */
  renewed(event: ElectionObservation & { term: LeaderTerm }): void {
    const candidate = this.candidate(event);
    if (candidate?.leading) candidate.lastRenewMs = this.clock.nowMs();
  }

  /** @inheritdoc */
  renewSlowPath(event: ElectionObservation): void {
    if (!this.candidate(event)) return;
    this.metrics.slowPath.inc({ name: event.election });
  }

  /** @inheritdoc */
  lockRequest(
    event: ElectionObservation & {
      operation: LockOperation;
      outcome: LockRequestOutcome;
      durationMs: number;
    },
  ): void {
    if (!this.candidate(event)) return;
    const { election: name, operation, outcome } = event;
    this.metrics.lockRequestDuration.observe({ name, operation, outcome }, event.durationMs / 1000);
    // An aborted request is our own shutdown or term end, not a failure of the lock.
    if (outcome !== 'success' && outcome !== 'aborted') {
      this.metrics.lockErrors.inc({ name, operation, kind: outcome });
    }
  }

  /**
   * Counts a transition when the holder changes to a candidate (not on the first sighting, not
   * on a release to `''`). If leaseTransitions advanced by more than one since the last sighting,
   * this process missed holders in between (they came and went between two reads): all count.
   */
  leaderObserved(
    event: ElectionObservation & { holderIdentity: string; leaseTransitions: number },
  ): void {
    const candidate = this.candidate(event);
    if (!candidate) return;
    const { holderIdentity, leaseTransitions } = event;
    if (
      candidate.holder !== undefined &&
      holderIdentity !== '' &&
      holderIdentity !== candidate.holder
    ) {
      const advanced = leaseTransitions - (candidate.leaseTransitions ?? leaseTransitions);
      const count = Number.isSafeInteger(advanced) && advanced > 1 ? advanced : 1;
      this.metrics.transitions.inc({ name: event.election }, count);
    }
    candidate.holder = holderIdentity;
    candidate.holderLabel =
      holderIdentity === ''
        ? undefined
        : this.holderLabels.valueFor(
            event.election,
            holderIdentity,
            event.identity,
            this.clock.nowMs(),
          );
    candidate.leaseTransitions = leaseTransitions;
  }

  /**
   * The counters of one `@LeaderOnly()` handler (`Class.method`) in `election`: increment
   * `ran`, `skipped` or `rejected` on each call. A plain object, so counting costs one
   * property increment; exported as `leader_election_leader_only_calls_total` when scraped.
   */
  leaderOnlyCallTally(election: string, handler: string): LeaderOnlyCallTally {
    return this.metrics.leaderOnlyCallTally(election, handler);
  }

  /**
   * Counts the slots of one leader-only scheduled job of `election` by outcome; exported as
   * `leader_election_schedule_slots_total{name,job,outcome}`.
   */
  scheduleSlotCounter(election: string, job: string): ScheduleSlotCounter {
    return this.metrics.scheduleSlotCounter(election, job);
  }

  /**
   * Removes this observer's candidates from the gauges (master status, time since renew,
   * observed leader). Counters and histograms keep their values, as counters do for the life
   * of a process. Idempotent; events after `close()` are ignored.
   */
  close(): void {
    this.closed = true;
    this.metrics.detach(this);
    this.candidates.clear();
  }

  /** @internal Read by the gauges at scrape time. */
  *snapshot(): Iterable<CandidateSnapshot> {
    const nowMs = this.clock.nowMs();
    for (const candidate of this.candidates.values()) {
      const snapshot: CandidateSnapshot = {
        election: candidate.election,
        leading: candidate.leading,
      };
      if (candidate.leading && candidate.lastRenewMs !== undefined) {
        snapshot.sinceLastRenewSeconds = Math.max(0, nowMs - candidate.lastRenewMs) / 1000;
      }
      if (candidate.holderLabel) snapshot.holder = candidate.holderLabel;
      yield snapshot;
    }
  }

  /**
   * The state of the candidate `event` is about (its counters start at 0 on first sight), or
   * `undefined` once closed.
   */
  private candidate(event: ElectionObservation): CandidateState | undefined {
    if (this.closed) return undefined;
    const key = `${event.election}\u0000${event.identity}`;
    let candidate = this.candidates.get(key);
    if (!candidate) {
      candidate = { election: event.election, leading: false };
      this.candidates.set(key, candidate);
      const name = event.election;
      this.metrics.transitions.inc({ name }, 0);
      for (const reason of TERM_START_REASONS) this.metrics.termsStarted.inc({ name, reason }, 0);
      this.metrics.slowPath.inc({ name }, 0);
      for (const reason of TERM_END_REASONS) this.metrics.termsEnded.inc({ name, reason }, 0);
    }
    return candidate;
  }
}
