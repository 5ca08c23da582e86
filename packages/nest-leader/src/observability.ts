/**
 * `nest-leader/observability`: the framework-free observers of an election — Prometheus metrics,
 * Kubernetes Events on the Lease, the pod role label — and `combineElectionObservers()` to run
 * several. `LeaderModule` builds them from its own options; use these with `LeaderElector`
 * (`nest-leader/core`) or as the `observer` of an election. prom-client is an optional peer,
 * loaded on first use.
 */
export {
  PrometheusElectionObserver,
  type PrometheusElectionObserverOptions,
} from './observability/prometheus.observer.js';
export { HOLDER_LABEL_LIMITS, OTHER_HOLDER_LABEL } from './observability/holder-label.js';
export type {
  CandidateSnapshot,
  CandidateSource,
  LeaderOnlyCallTally,
  PrometheusRegistry,
  ScheduleSlotCounter,
  ScheduleSlotOutcome,
} from './observability/election-metrics.interfaces.js';
export {
  ELECTION_METRIC_NAMES,
  LEADERSHIP_DURATION_BUCKETS_SECONDS,
  LOCK_REQUEST_DURATION_BUCKETS_SECONDS,
} from './observability/election-metrics.constants.js';
export {
  PrometheusShardObserver,
  SHARD_METRIC_NAMES,
  type PrometheusShardObserverOptions,
} from './observability/prometheus-shard.observer.js';
export {
  combineElectionObservers,
  combineShardObservers,
  type Flushable,
} from './observability/composite.observer.js';
export {
  DEFAULT_SHARDS_MOVED_INTERVAL_MS,
  MAX_EVENT_NOTE_BYTES,
  SHARDS_MOVED_EVENT_ACTION,
  SHARDS_MOVED_EVENT_REASON,
  ShardEventsObserver,
  type ShardEventsObserverOptions,
} from './observability/shard-events.observer.js';
export {
  DEFAULT_EVENT_REQUEST_TIMEOUT_MS,
  DEFAULT_REPORTING_CONTROLLER,
  LEADER_ELECTION_EVENT_REASON,
  LeaseEventsObserver,
  type LeaseEventsObserverOptions,
} from './observability/lease-events.observer.js';
export {
  DEFAULT_POD_LABEL_REQUEST_TIMEOUT_MS,
  DEFAULT_ROLE_LABEL_KEY,
  LEADER_POD_DELETION_COST,
  POD_DELETION_COST_ANNOTATION,
  POD_ROLE,
  PodRoleLabelObserver,
  type PodRoleLabelObserverOptions,
} from './observability/pod-role-label.observer.js';
