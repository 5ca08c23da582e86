/**
 * Shapes shared by the Prometheus observer and its metric set. No prom-client types here: this
 * file is part of the public API, and prom-client is an optional peer dependency.
 */

/**
 * The part of a prom-client `Registry` the observer uses; a `Registry` from prom-client 15
 * (its default `register`, `new Registry()`, `@willsoto/nestjs-prometheus`'s) fits.
 */
export interface PrometheusRegistry {
  /** Adds a metric (a prom-client `Gauge`, `Counter`…) to the registry. */
  registerMetric(metric: never): void;
  /** The metric registered under `name`, if any: reused instead of registering it twice. */
  getSingleMetric(name: string): unknown;
}

/** How `@LeaderOnly()` calls of one handler ended: incremented on the gate's path. */
export interface LeaderOnlyCallTally {
  /** Ran on the leader. */
  ran: number;
  /** Not run on a follower; `undefined` (or the follower function's result) returned. */
  skipped: number;
  /** Not run on a follower; the caller got an error (HTTP 503, `RpcException`). */
  rejected: number;
}

/**
 * What became of the scheduled slots of a leader-only job (`@LeaderOnly()` + `@Cron`/`@Interval`)
 * on the leader: `on_time` — run by its tick; `caught_up` — a missed slot run late by a new
 * leader; `redone` — a slot a previous leader began and did not complete, run again;
 * `skipped` — a missed slot the catch-up policy does not run; `expired` — a missed slot older
 * than the catch-up horizon, never run late.
 */
export type ScheduleSlotOutcome = 'on_time' | 'caught_up' | 'redone' | 'skipped' | 'expired';

/** Counts the slots of one scheduled job by outcome (see {@link ScheduleSlotOutcome}). */
export type ScheduleSlotCounter = (outcome: ScheduleSlotOutcome, count?: number) => void;

/** What one observer reports for one candidate when the registry is scraped. */
export interface CandidateSnapshot {
  election: string;
  leading: boolean;
  /** Seconds since the last successful acquire/renew, while leading. */
  sinceLastRenewSeconds?: number;
  /** The observed holder's label value (bounded: see `HOLDER_LABEL_LIMITS`), if any. */
  holder?: string;
}

/** Something that reports candidates at scrape time: a {@link PrometheusElectionObserver}. */
export interface CandidateSource {
  /** One entry per candidate this source observes, as of now. */
  snapshot(): Iterable<CandidateSnapshot>;
}
