export * from './errors.js';
// Sharded elections
export { ShardedElection, type ShardOwnershipEvent } from './sharding/sharded-election.js';
export {
  MAX_SHARDED_ELECTION_NAME_LENGTH,
  type ShardCallbacks,
  type ShardedElectionOptions,
} from './sharding/sharded-election.options.js';
export type { ShardTerm } from './sharding/shard-term.js';
export type { ShardObserver } from './sharding/shard-observer.js';
export {
  PrometheusShardObserver,
  SHARD_METRIC_NAMES,
  type PrometheusShardObserverOptions,
} from './observability/prometheus-shard.observer.js';
export { fnv1a32, shardOfKey } from './sharding/shard-hash.js';
export { balanceShards } from './sharding/shard-balancer.js';
export {
  formatShardAssignment,
  parseShardAssignment,
  SHARD_ASSIGNMENT_FORMAT_VERSION,
  SHARD_ASSIGNMENT_LIMITS,
  type ShardAssignment,
  type ShardGrant,
  type ShardOwner,
} from './sharding/shard-assignment.js';
export { assignmentLeaseName, memberLeaseName } from './sharding/member-state.js';
export type { ListedLease, ShardLeaseStore } from './sharding/shard-lease-store.js';
export {
  KubernetesShardLeaseStore,
  type KubernetesShardLeaseStoreOptions,
} from './sharding/kubernetes-shard-lease-store.js';
export { ShardedElectionService } from './nest/sharded-elections/sharded-election.service.js';
export { currentShard } from './nest/sharded-elections/shard-term.context.js';
export type { ShardedElectionModuleOptions } from './nest/sharded-elections/sharded-election-options.interfaces.js';
// Core: election
export { LeaderElector } from './core/election/leader-elector.js';
export type { LeaderElectionHealth } from './core/election/leader-elector.health.js';
export type { TransferLeadershipOptions } from './core/handoff/leadership-handoff.js';
export {
  DEFAULT_LEASE_DURATION_SECONDS,
  DEFAULT_RENEW_DEADLINE_SECONDS,
  DEFAULT_RETRY_PERIOD_SECONDS,
  ACQUIRE_JITTER,
  JITTER_FACTOR,
  MAX_IDENTITY_LENGTH,
  validateIdentity,
  validateLeaderElectionTimings,
  type ElectionLogger,
  type LeaderCallbacks,
  type LeaderElectionTimings,
  type LeaderElectorOptions,
  type ScheduleLedgerWriter,
  type LeaderTerm,
} from './core/leader-elector.options.js';
export {
  noopElectionObserver,
  type ElectionObservation,
  type ElectionObserver,
  type LeadershipChangeReason,
  type LockRequestOutcome,
} from './core/election-observer.js';
export { SystemClock, type Clock, type TimerHandle } from './core/clock.js';
export { resolveIdentity } from './core/identity.js';
// Core: the elector's parts, exported for this package's unit tests only. Each is `@internal`:
// left out of the API reference, no compatibility promise; use LeaderElector.
export {
  ElectionNotifier,
  type ElectionNotifierOptions,
} from './core/election/election-notifier.js';
export {
  checkElectionHealth,
  type ElectionHealthSnapshot,
} from './core/election/leader-elector.health.js';
export {
  type HolderCheckContext,
  HolderChecks,
  type HolderChecksConfig,
} from './core/election/holder-checks.js';
export { LeaderTermLifetime, type LeaderTermLifetimeOptions } from './core/leader-term.js';
export {
  type HandoffSessionConfig,
  type HandoffSessionHost,
  LeadershipHandoffSession,
} from './core/handoff/leadership-handoff.session.js';
export {
  ACCESS_DENIED_GRACE_MS,
  isNotFound,
  LockFailureReporter,
  lockRequestOutcome,
} from './core/election/lock-failure.reporter.js';
export { LockRequests, type LockRequestListener } from './core/election/lock-requests.js';
export {
  MAX_OFFERS_PER_HANDOFF,
  offerPollMs,
  offerWindowMs,
  isAccepted,
  isOpenOfferTo,
} from './core/handoff/handoff-offer.js';
export {
  HandoffOffers,
  type HandoffOfferConfig,
  type HandoffOfferHost,
  type OfferingTerm,
  type OfferOutcome,
} from './core/handoff/handoff-offer.session.js';
export {
  type MissingLeaseWait,
  ObservedRecord,
  sameElectionRecord,
  validTransitions,
} from './core/election/observed-record.js';
export { scheduleLedgerStamp } from './core/schedule-ledger/schedule-ledger.stamp.js';
export {
  createdRecord,
  renewalRecord,
  type TakeoverToken,
  takeoverRecord,
  type TermWrite,
} from './core/election/term-records.js';
// Core: locks
export type {
  HolderLiveness,
  LeaseHandoff,
  LeaseHandoffOffer,
  LeaseRecord,
  LockOperation,
  ResourceLock,
  TemplateBackoff,
  VersionedLeaseRecord,
} from './locks/resource-lock.js';
export {
  MAX_TEMPLATE_BACKOFF_FAILURES,
  parseLeaseHandoff,
  parseLeaseHandoffOffer,
  parseLeaseRecord,
  parseTemplateBackoff,
} from './locks/resource-lock.js';
export {
  MAX_CANDIDATES_TEXT_LENGTH,
  MAX_MARKER_TEXT_LENGTH,
  isCandidateIdentity,
} from './locks/peer-bounds.js';
export {
  type AdvertisedCandidate,
  parseAdvertisedCandidates,
} from './locks/advertised-candidates.js';
export {
  MAX_ADVERTISED_CANDIDATES,
  newestTemplate,
  preferredCandidate,
} from './core/handoff/candidate-preference.js';
export {
  newerTemplateCandidates,
  TEMPLATE_BACKOFF_BASE_MS,
  TEMPLATE_BACKOFF_MAX_MS,
  templateBackoffAfterTakeover,
  templateBackoffMs,
} from './core/handoff/newer-template-yield.js';
export {
  dueSlots,
  intervalSchedule,
  slotOfTick,
  EARLY_TICK_TOLERANCE_MS,
  type DueSlots,
  type SlotSchedule,
} from './core/schedule-ledger/schedule-slots.js';
export {
  compareLedgerSlots,
  emptyScheduleLedger,
  limitScheduleLedger,
  mergeScheduleLedgers,
  recordSlotCompleted,
  recordSlotStarted,
  type JobLedgerEntry,
  type LedgerSlot,
  type ScheduleLedger,
} from './core/schedule-ledger/schedule-ledger.js';
export {
  decodeScheduleLedger,
  encodeScheduleLedger,
  SCHEDULE_LEDGER_FORMAT_VERSION,
  SCHEDULE_LEDGER_LIMITS,
  type DecodedScheduleLedger,
  type ScheduleLedgerReadBounds,
} from './core/schedule-ledger/schedule-ledger.codec.js';
export { CompletionWatermark } from './core/schedule-ledger/completion-watermark.js';
export {
  ScheduleLedgerBook,
  ScheduleLedgerTerm,
} from './core/schedule-ledger/schedule-ledger.book.js';
export {
  DEFAULT_CATCH_UP_POLICY,
  DEFAULT_MAX_CATCH_UP,
  defaultHorizonMs,
  planCatchUp,
  type CatchUpOptions,
  type CatchUpPlan,
  type CatchUpPolicy,
} from './core/schedule-ledger/catch-up.policy.js';
export {
  isWatchableLock,
  type LockWatch,
  type LockWatchListener,
  type WatchableLock,
} from './locks/watchable-lock.js';
export type { LeaseWatchOptions } from './locks/kubernetes-object/lease.watcher.js';
export {
  DEFAULT_LEASE_REQUEST_TIMEOUT_MS,
  type KubernetesObjectApi,
  KubernetesObjectLock,
  type KubernetesObjectLockOptions,
} from './locks/kubernetes-object/kubernetes-object.lock.js';
export {
  LeaseLock,
  CANDIDATES_ANNOTATION,
  HANDOFF_ANNOTATION,
  HANDOFF_OFFER_ANNOTATION,
  SCHEDULE_LEDGER_ANNOTATION,
  SHARDS_ANNOTATION,
  TEMPLATE_BACKOFF_ANNOTATION,
  type LeaseLockOptions,
} from './locks/kubernetes-object/lease.lock.js';
export type { Candidacy, CandidacyListener } from './locks/candidacy/candidacy.js';
export {
  DEFAULT_CANDIDATE_RENEW_INTERVAL_MS,
  DEFAULT_PING_CHECK_INTERVAL_MS,
  LeaseCandidateRegistration,
  OLDEST_EMULATION_VERSION,
  type LeaseCandidateRegistrationOptions,
} from './locks/candidacy/lease-candidate.registration.js';
export { FileLock, type FileLockOptions } from './locks/file/file.lock.js';
export {
  defaultFileLockDirectory,
  projectRoot,
  userFileLockDirectory,
} from './locks/file/file-lock-directory.js';
export {
  ConfigMapLock,
  type ConfigMapLockOptions,
} from './locks/kubernetes-object/configmap.lock.js';
export {
  DEFAULT_SIDECAR_REQUEST_TIMEOUT_MS,
  SidecarLock,
  type SidecarLockOptions,
} from './locks/sidecar.lock.js';
export {
  LEADER_ANNOTATION,
  UNREADABLE_HOLDER,
  formatLeaderAnnotation,
  parseLeaderAnnotation,
  type ParsedLeaderAnnotation,
} from './locks/kubernetes-object/leader-annotation.record.js';
export type {
  KubeConfigSource,
  KubernetesApiErrorDetails,
  LeaseApiErrorDetails,
} from './errors.messages.js';
export { classifyKubernetesApiError, type KubernetesRequest } from './kubernetes/api-errors.js';
export {
  LOCK_KINDS,
  selectLock,
  type LockKind,
  type LockKindEntry,
  type LockSelectionOptions,
  type SelectedLock,
  type SidecarLockSpec,
} from './locks/lock-selection.js';
export {
  findKubernetesConfig,
  loadKubernetesConfig,
  SERVICE_ACCOUNT_TOKEN_PATH,
  type FoundKubernetesConfig,
  type KubernetesEnvironment,
} from './kubernetes/kube-config.loader.js';
export { isDnsSubdomain, validateLeaseName, validateNamespace } from './kubernetes/names.js';
export {
  resolveNamespace,
  SERVICE_ACCOUNT_NAMESPACE_PATH,
  type ResolveNamespaceOptions,
} from './kubernetes/namespace.js';
// Observability (framework-free; prom-client is an optional peer, loaded on first use)
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
export { combineElectionObservers, type Flushable } from './observability/composite.observer.js';
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
// The leader-elector sidecar (bin nest-leader-elector; core only)
export {
  DEFAULT_SIDECAR_TTL_MS,
  parseGoDurationMs,
  parseSidecarArgs,
  type SidecarOptions,
} from './sidecar/sidecar-options.js';
export {
  LeaderElectorSidecar,
  type SidecarDependencies,
} from './sidecar/leader-elector.sidecar.js';
export type { LeaderFileContent } from './sidecar/leader-file.js';
export type {
  SidecarHealthResponse,
  SidecarLeaderResponse,
  SidecarReadyResponse,
} from './sidecar/sidecar.server.js';
export type {
  SidecarTransferRequest,
  SidecarTransferResponse,
} from './sidecar/sidecar-transfer.server.js';
export { SIDECAR_HTTP_LIMITS, type SidecarHttpLimits } from './sidecar/sidecar-http.js';
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
