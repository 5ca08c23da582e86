/**
 * `nest-leader`: leader election for a Nest application — `LeaderModule`, `@LeaderOnly()`,
 * `LeaderElectionService`, the leadership events, the Terminus indicator, every error class and
 * the types of their options and results. The framework-free elector and the locks are
 * `nest-leader/core`, the observers `nest-leader/observability`, the test helpers
 * `nest-leader/testing`.
 */
export * from './errors.js';
// The types options and results are made of (their homes: nest-leader/core, nest-leader/observability)
export type { LeaderElectionHealth } from './core/election/leader-elector.health.js';
export type { TransferLeadershipOptions } from './core/handoff/leadership-handoff.js';
export type {
  ElectionLogger,
  LeaderCallbacks,
  LeaderElectionTimings,
  LeaderTerm,
} from './core/leader-elector.options.js';
export type { ElectionObserver } from './core/election-observer.js';
export type { CatchUpOptions, CatchUpPolicy } from './core/schedule-ledger/catch-up.policy.js';
export type { ResourceLock } from './locks/resource-lock.js';
export type { SidecarLockSpec } from './locks/lock-selection.js';
export type { PrometheusRegistry } from './observability/election-metrics.interfaces.js';
export type { ShardOwnershipEvent } from './sharding/sharded-election.js';
export type { ShardTerm } from './sharding/shard-term.js';
export type { ShardObserver } from './sharding/shard-observer.js';
// Nest layer
export { LeaderModule } from './nest/leader.module.js';
export type { LeaderModuleExtras } from './nest/leader.module-definition.js';
export type {
  ElectionModuleExtras,
  ElectionOptions,
  ElectionOptionsFactory,
  LeaderLockKind,
  LeaderModuleOptions,
  LeaderModuleOptionsFactory,
  RegisterElectionAsyncOptions,
  RegisterElectionOptions,
} from './nest/leader-module-options.interfaces.js';
export { DEFAULT_ELECTION_NAME, LeadershipEvent } from './nest/leader.constants.js';
export { LeaderElectionService } from './nest/elections/leader-election.service.js';
export type {
  ManagedElector,
  ResolvedElectionOptions,
} from './nest/elections/elections.interfaces.js';
export {
  getElectionCallbacksToken,
  getElectionLockToken,
  getElectionObserverToken,
  getElectionOptionsToken,
  getLeaderElectionToken,
  getLeaderElectorToken,
} from './nest/elections/election.tokens.js';
export { InjectElection } from './nest/elections/inject-election.decorator.js';
export { LeaderOnly } from './nest/leader-only/leader-only.decorator.js';
export type {
  FollowerBehaviour,
  FollowerContext,
  HandlerKind,
  LeaderOnlyOptions,
  LeaderOnlyVerification,
} from './nest/leader-only/leader-only.interfaces.js';
export {
  currentTerm,
  currentSlot,
  type ScheduledSlot,
} from './nest/leader-only/leader-term.context.js';
export type { CatchUpSetting } from './nest/schedule/catch-up.options.js';
export {
  NotLeaderException,
  type NotLeaderResponseBody,
} from './nest/leader-only/not-leader.exception.js';
export { NotLeaderExceptionFilter } from './nest/leader-only/not-leader.filter.js';
export {
  OnLeaderChanged,
  OnLeadershipAcquired,
  OnLeadershipLost,
} from './nest/leadership-events/leadership-events.decorator.js';
export {
  LeaderHealthIndicator,
  type LeaderHealthIndicatorResult,
} from './nest/health/leader.health.js';
// Sharded elections
export { ShardedElectionService } from './nest/sharded-elections/sharded-election.service.js';
export { currentShard } from './nest/sharded-elections/shard-term.context.js';
export type { ShardedElectionModuleOptions } from './nest/sharded-elections/sharded-election-options.interfaces.js';
export { shardOfKey } from './sharding/shard-hash.js';
