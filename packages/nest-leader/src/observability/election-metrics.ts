/**
 * The Prometheus metrics of leader election: names, help, labels and buckets in one table, and
 * the one set of metric objects per registry that every {@link PrometheusElectionObserver} of
 * that registry shares — so a second application in the same process (or a test) reuses the
 * registered metrics instead of failing to register them again.
 *
 * Counters and histograms are updated as events arrive. Gauges that describe the present
 * (master status, time since the last renewal, observed leader) and the `@LeaderOnly()` call
 * counts are computed when the registry is scraped, from the observers attached at that moment.
 */
import type { Counter, Gauge, Histogram } from 'prom-client';
import { InvalidLeaderElectionOptionError } from '../errors.js';
import { observabilityMessages } from './observability.messages.js';
import type {
  CandidateSnapshot,
  CandidateSource,
  LeaderOnlyCallTally,
  ScheduleSlotCounter,
  PrometheusRegistry,
} from './election-metrics.interfaces.js';
import {
  ELECTION_METRIC_NAMES,
  LEADERSHIP_DURATION_BUCKETS_SECONDS,
  LOCK_REQUEST_DURATION_BUCKETS_SECONDS,
} from './election-metrics.constants.js';
import type { PromClient } from './prom-client.loader.js';

type Name = typeof ELECTION_METRIC_NAMES;

/** One set of metric objects, registered in one registry. */
export class ElectionMetrics {
  readonly masterStatus: Gauge<'name'>;
  readonly slowPath: Counter<'name'>;
  readonly transitions: Counter<'name'>;
  readonly termsStarted: Counter<'name' | 'reason'>;
  readonly termsEnded: Counter<'name' | 'reason'>;
  readonly leadershipDuration: Histogram<'name'>;
  readonly lockRequestDuration: Histogram<'name' | 'operation' | 'outcome'>;
  readonly lockErrors: Counter<'name' | 'operation' | 'kind'>;
  readonly timeSinceLastRenew: Gauge<'name'>;
  readonly observedLeader: Gauge<'name' | 'holder'>;
  readonly leaderOnlyCalls: Counter<'name' | 'handler' | 'outcome'>;
  readonly scheduleSlots: Counter<'name' | 'job' | 'outcome'>;

  private readonly sources = new Set<CandidateSource>();
  /** Keyed by election + NUL + handler; kept for the life of the process, as counters are. */
  private readonly tallies = new Map<
    string,
    { election: string; handler: string; tally: LeaderOnlyCallTally }
  >();

  constructor(client: PromClient) {
    const n: Name = ELECTION_METRIC_NAMES;
    const sources = this.sources;
    const tallies = this.tallies;
    // registers: [] — registered explicitly, in the registry the observer was given.
    this.masterStatus = new client.Gauge({
      name: n.masterStatus,
      help: '1 while this process leads the election, else 0 (as client-go).',
      labelNames: ['name'],
      registers: [],
      collect() {
        this.reset();
        const leading = new Map<string, number>();
        for (const c of snapshots(sources)) {
          leading.set(c.election, Math.max(leading.get(c.election) ?? 0, c.leading ? 1 : 0));
        }
        for (const [name, value] of leading) this.set({ name }, value);
      },
    });
    this.slowPath = new client.Counter({
      name: n.slowPath,
      help:
        'Renewals that fell back from updating the cached Lease to reading it first (as ' +
        'client-go).',
      labelNames: ['name'],
      registers: [],
    });
    this.transitions = new client.Counter({
      name: n.transitions,
      help: 'Changes of the Lease holder this process observed (its own acquisitions included).',
      labelNames: ['name'],
      registers: [],
    });
    this.termsStarted = new client.Counter({
      name: n.termsStarted,
      help:
        'Terms this process started (acquired the Lease), by reason: handoff (handed to it by ' +
        'transferLeadership), preferred (handed to it by preference), release (taken from a ' +
        'released Lease), expired (taken after the holder expired or its own renewal was ' +
        'lost), created (the Lease did not exist).',
      labelNames: ['name', 'reason'],
      registers: [],
    });
    this.termsEnded = new client.Counter({
      name: n.termsEnded,
      help:
        'Terms of this process that ended, by reason: stopped (shutdown; the Lease is then ' +
        'released), handed-off (transferLeadership), renew-deadline-exceeded, lease-taken-over, ' +
        'lease-deleted, election-failed.',
      labelNames: ['name', 'reason'],
      registers: [],
    });
    this.leadershipDuration = new client.Histogram({
      name: n.leadershipDuration,
      help: 'Length of the terms of this process, from acquiring the Lease to the end of the term.',
      labelNames: ['name'],
      buckets: LEADERSHIP_DURATION_BUCKETS_SECONDS,
      registers: [],
    });
    this.lockRequestDuration = new client.Histogram({
      name: n.lockRequestDuration,
      help:
        'Duration of requests to the lock (the Lease), by operation (get, create, update) and ' +
        'outcome (success, or the error kind).',
      labelNames: ['name', 'operation', 'outcome'],
      buckets: LOCK_REQUEST_DURATION_BUCKETS_SECONDS,
      registers: [],
    });
    this.lockErrors = new client.Counter({
      name: n.lockErrors,
      help:
        'Failed requests to the lock, by operation and kind (conflict, forbidden, ' +
        'unauthorized, configuration, not-found, invalid, transient, timeout, unknown).',
      labelNames: ['name', 'operation', 'kind'],
      registers: [],
    });
    this.timeSinceLastRenew = new client.Gauge({
      name: n.timeSinceLastRenew,
      help:
        'Seconds since this process last acquired or renewed the Lease; only while it leads ' +
        '(it steps down at renewDeadline).',
      labelNames: ['name'],
      registers: [],
      collect() {
        this.reset();
        const since = new Map<string, number>();
        for (const c of snapshots(sources)) {
          if (c.sinceLastRenewSeconds === undefined) continue;
          since.set(
            c.election,
            Math.min(since.get(c.election) ?? Infinity, c.sinceLastRenewSeconds),
          );
        }
        for (const [name, value] of since) this.set({ name }, value);
      },
    });
    this.observedLeader = new client.Gauge({
      name: n.observedLeader,
      help: 'Always 1; holder is the Lease holder as this process last observed it (absent when free).',
      labelNames: ['name', 'holder'],
      registers: [],
      collect() {
        this.reset();
        for (const c of snapshots(sources)) {
          if (c.holder) this.set({ name: c.election, holder: c.holder }, 1);
        }
      },
    });
    this.leaderOnlyCalls = new client.Counter({
      name: n.leaderOnlyCalls,
      help:
        'Calls of @LeaderOnly() methods, by handler (Class.method) and outcome: ran (leader), ' +
        'skipped or rejected (follower).',
      labelNames: ['name', 'handler', 'outcome'],
      registers: [],
      collect() {
        this.reset();
        for (const { election, handler, tally } of tallies.values()) {
          const labels = { name: election, handler };
          this.inc({ ...labels, outcome: 'ran' }, tally.ran);
          this.inc({ ...labels, outcome: 'skipped' }, tally.skipped);
          this.inc({ ...labels, outcome: 'rejected' }, tally.rejected);
        }
      },
    });
    this.scheduleSlots = new client.Counter({
      name: n.scheduleSlots,
      help:
        'Scheduled slots of leader-only jobs on the leader, by job and outcome: on_time, ' +
        'caught_up, redone, skipped, expired (see the schedule ledger).',
      labelNames: ['name', 'job', 'outcome'],
      registers: [],
    });
  }

  /** Every metric object, for registration. */
  all(): { name: string; metric: object }[] {
    return [
      this.masterStatus,
      this.slowPath,
      this.transitions,
      this.termsStarted,
      this.termsEnded,
      this.leadershipDuration,
      this.lockRequestDuration,
      this.lockErrors,
      this.timeSinceLastRenew,
      this.observedLeader,
      this.leaderOnlyCalls,
      this.scheduleSlots,
    ].map((metric) => ({ name: (metric as unknown as { name: string }).name, metric }));
  }

  /** Adds a source of candidates for the scrape-time gauges. */
  attach(source: CandidateSource): void {
    this.sources.add(source);
  }

  /** Removes a source: its candidates no longer appear in the gauges. */
  detach(source: CandidateSource): void {
    this.sources.delete(source);
  }

  /** The tally of one `@LeaderOnly()` handler in one election, created on first use. */
  leaderOnlyCallTally(election: string, handler: string): LeaderOnlyCallTally {
    const key = `${election}\u0000${handler}`;
    let entry = this.tallies.get(key);
    if (!entry) {
      entry = { election, handler, tally: { ran: 0, skipped: 0, rejected: 0 } };
      this.tallies.set(key, entry);
    }
    return entry.tally;
  }

  /** Counts the slots of one scheduled job of one election by outcome. */
  scheduleSlotCounter(election: string, job: string): ScheduleSlotCounter {
    return (outcome, count = 1) => this.scheduleSlots.inc({ name: election, job, outcome }, count);
  }
}

function* snapshots(sources: Set<CandidateSource>): Iterable<CandidateSnapshot> {
  for (const source of sources) yield* source.snapshot();
}

const shared = new WeakMap<object, ElectionMetrics>();

/**
 * The metric set of `registry`, created and registered on first use. Registers again any metric
 * the registry lost (`registry.clear()` in a test), so counters carry on where they were.
 * @throws InvalidLeaderElectionOptionError (`registry`) if `registry` is not a registry, or holds
 *   a metric of the same name that this library did not create.
 */
export function electionMetricsFor(
  registry: PrometheusRegistry,
  client: PromClient,
): ElectionMetrics {
  if (
    typeof registry?.registerMetric !== 'function' ||
    typeof registry.getSingleMetric !== 'function'
  ) {
    throw new InvalidLeaderElectionOptionError(
      'registry',
      observabilityMessages.registryRule,
      registry,
    );
  }
  let metrics = shared.get(registry);
  if (!metrics) {
    metrics = new ElectionMetrics(client);
    shared.set(registry, metrics);
  }
  for (const { name, metric } of metrics.all()) {
    const existing = registry.getSingleMetric(name);
    if (existing === metric) continue;
    if (existing !== undefined) {
      throw new InvalidLeaderElectionOptionError(
        'registry',
        observabilityMessages.foreignMetric(name),
        name,
      );
    }
    registry.registerMetric(metric as never);
  }
  return metrics;
}
