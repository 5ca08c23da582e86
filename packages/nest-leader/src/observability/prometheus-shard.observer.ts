/**
 * Prometheus metrics of sharded elections (prom-client, an optional peer dependency): shards
 * owned per member, shard terms started and ended, drain, handoff and unowned durations.
 * Nest-free; see the package's docs/sharded-leadership.md for each metric.
 */
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { ShardTermEndReason } from '../errors.interfaces.js';
import type { ShardObserver } from '../sharding/shard-observer.js';
import type { PrometheusRegistry } from './election-metrics.interfaces.js';
import { loadPromClient } from './prom-client.loader.js';

/** The sharded election metric names, as exported. */
export const SHARD_METRIC_NAMES = {
  owned: 'nest_leader_shards_owned',
  termsStarted: 'nest_leader_shard_terms_started_total',
  termsEnded: 'nest_leader_shard_terms_ended_total',
  drain: 'nest_leader_shard_drain_duration_seconds',
  handoff: 'nest_leader_shard_handoff_duration_seconds',
  unowned: 'nest_leader_shard_unowned_duration_seconds',
} as const;

/** Buckets of the shard durations: 5 ms to 60 s. */
const SHARD_DURATION_BUCKETS_SECONDS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 60,
];

const metricsByRegistry = new WeakMap<object, unknown>();

/** Options of {@link PrometheusShardObserver}. */
export interface PrometheusShardObserverOptions {
  /** The registry to register in; default prom-client's global `register`. */
  registry?: PrometheusRegistry;
}

/**
 * A {@link ShardObserver} exporting Prometheus metrics, labelled by election `name`:
 * `nest_leader_shards_owned` (gauge: shards this member owns), `nest_leader_shard_terms_started_total`,
 * `nest_leader_shard_terms_ended_total{reason}` (moves seen from the member), and three
 * histograms in seconds: `…_drain_duration_seconds` (a shard's work draining after its term
 * ended, member side), `…_handoff_duration_seconds` (revoke written → granted on, coordinator
 * side) and `…_unowned_duration_seconds` (the coordinator found the shard free → granted).
 * @throws MissingPeerDependencyError if prom-client is not installed.
 */
export class PrometheusShardObserver implements ShardObserver {
  private readonly owned: Gauge<'name'>;
  private readonly started: Counter<'name'>;
  private readonly ended: Counter<'name' | 'reason'>;
  private readonly drain: Histogram<'name'>;
  private readonly handoff: Histogram<'name'>;
  private readonly unowned: Histogram<'name'>;

  constructor(options: PrometheusShardObserverOptions = {}) {
    const client = loadPromClient('PrometheusShardObserver');
    const registry = (options.registry ?? client.register) as object;
    // One set of metrics per registry: every sharded election of the process shares it.
    const shared = metricsByRegistry.get(registry) as PrometheusShardObserver | undefined;
    if (shared) {
      ({
        owned: this.owned,
        started: this.started,
        ended: this.ended,
        drain: this.drain,
        handoff: this.handoff,
        unowned: this.unowned,
      } = shared);
      return;
    }
    metricsByRegistry.set(registry, this);
    const registers = [registry as never];
    const n = SHARD_METRIC_NAMES;
    const buckets = SHARD_DURATION_BUCKETS_SECONDS;
    this.owned = new client.Gauge({
      name: n.owned,
      help: 'Shards this member owns now.',
      labelNames: ['name'],
      registers,
    });
    this.started = new client.Counter({
      name: n.termsStarted,
      help: 'Shard terms this member started.',
      labelNames: ['name'],
      registers,
    });
    this.ended = new client.Counter({
      name: n.termsEnded,
      help: 'Shard terms this member ended, by reason (revoked: moved away).',
      labelNames: ['name', 'reason'],
      registers,
    });
    this.drain = new client.Histogram({
      name: n.drain,
      help: "A shard's work draining after its term ended (member side).",
      labelNames: ['name'],
      buckets,
      registers,
    });
    this.handoff = new client.Histogram({
      name: n.handoff,
      help: 'From the revoke written to the shard granted on (coordinator side).',
      labelNames: ['name'],
      buckets,
      registers,
    });
    this.unowned = new client.Histogram({
      name: n.unowned,
      help: 'From the shard found free to granted (coordinator side).',
      labelNames: ['name'],
      buckets,
      registers,
    });
  }

  shardStarted(event: { election: string; owned: number }): void {
    this.started.inc({ name: event.election });
    this.owned.set({ name: event.election }, event.owned);
  }

  shardStopped(event: { election: string; reason: ShardTermEndReason; owned: number }): void {
    this.ended.inc({ name: event.election, reason: event.reason });
    this.owned.set({ name: event.election }, event.owned);
  }

  shardDrained(event: { election: string; drainMs: number }): void {
    this.drain.observe({ name: event.election }, event.drainMs / 1000);
  }

  shardHandedOff(event: { election: string; handoffMs: number }): void {
    this.handoff.observe({ name: event.election }, event.handoffMs / 1000);
  }

  shardGranted(event: { election: string; unownedMs: number | undefined }): void {
    if (event.unownedMs !== undefined)
      this.unowned.observe({ name: event.election }, event.unownedMs / 1000);
  }
}
