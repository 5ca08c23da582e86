/**
 * `nest-leader/core`: the framework-free elector and its locks, without Nest — as client-go keeps
 * `leaderelection` and `resourcelock` apart from any controller framework.
 * `import { LeaderElector, LeaseLock } from 'nest-leader/core'`.
 *
 * Here: the elector (`LeaderElector`), its options, timings and defaults, the observer seam, the
 * clock; the lock seam (`ResourceLock`, the Lease record and its parsers) and every built-in
 * lock (Lease, ConfigMap, file, sidecar), `selectLock()`, the coordinated election's
 * LeaseCandidate; the sidecar's wire contract (what `nest-leader-elector` serves, `SidecarLock`
 * reads); the kubeconfig loader, Kubernetes name checks and message formatting of foreign text;
 * every error class. The Nest layer is the package's main entry (`nest-leader`), the observers
 * `nest-leader/observability`.
 */
export * from './errors.js';
// The elector
export { LeaderElector } from './core/election/leader-elector.js';
export type { LeaderElectionHealth } from './core/election/leader-elector.health.js';
export type { TransferLeadershipOptions } from './core/handoff/leadership-handoff.js';
export {
  DEFAULT_LEASE_DURATION_SECONDS,
  DEFAULT_RENEW_DEADLINE_SECONDS,
  DEFAULT_RETRY_PERIOD_SECONDS,
  defaultNewerTemplateSettleSeconds,
  ACQUIRE_JITTER,
  JITTER_FACTOR,
  lockRequestTimeoutMs,
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
export { acceptedHandoffSeconds, offerWindowMs } from './core/handoff/handoff-offer.js';
export { preferredCandidate } from './core/handoff/candidate-preference.js';
export {
  defaultHorizonMs,
  type CatchUpOptions,
  type CatchUpPolicy,
} from './core/schedule-ledger/catch-up.policy.js';
// The lock seam: the record and the interfaces every lock implements
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
  type AdvertisedCandidate,
  parseAdvertisedCandidates,
} from './locks/advertised-candidates.js';
export {
  isWatchableLock,
  type LockWatch,
  type LockWatchListener,
  type WatchableLock,
} from './locks/watchable-lock.js';
// The locks
export {
  LOCK_KINDS,
  selectLock,
  type LockKind,
  type LockKindEntry,
  type LockSelectionOptions,
  type SelectedLock,
  type SidecarLockSpec,
} from './locks/lock-selection.js';
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
export {
  ConfigMapLock,
  type ConfigMapLockOptions,
} from './locks/kubernetes-object/configmap.lock.js';
export {
  LEADER_ANNOTATION,
  UNREADABLE_HOLDER,
} from './locks/kubernetes-object/leader-annotation.record.js';
export { FileLock, type FileLockOptions } from './locks/file/file.lock.js';
export {
  defaultFileLockDirectory,
  projectRoot,
  userFileLockDirectory,
} from './locks/file/file-lock-directory.js';
export {
  DEFAULT_SIDECAR_REQUEST_TIMEOUT_MS,
  SidecarLock,
  type SidecarLockOptions,
} from './locks/sidecar.lock.js';
export type { Candidacy, CandidacyListener } from './locks/candidacy/candidacy.js';
export {
  LeaseCandidateRegistration,
  type LeaseCandidateRegistrationOptions,
} from './locks/candidacy/lease-candidate.registration.js';
// Sharded elections: the framework-free election, its assignment record and its store
export { ShardedElection, type ShardOwnershipEvent } from './sharding/sharded-election.js';
export {
  MAX_SHARDED_ELECTION_NAME_LENGTH,
  type ShardCallbacks,
  type ShardedElectionOptions,
} from './sharding/sharded-election.options.js';
export type { ShardTerm } from './sharding/shard-term.js';
export type { ShardObserver } from './sharding/shard-observer.js';
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
// The nest-leader-elector sidecar's wire contract: what it serves and SidecarLock reads
export {
  MAX_TRANSFER_BODY_BYTES,
  type LeaderFileContent,
  type SidecarHealthResponse,
  type SidecarLeaderResponse,
  type SidecarReadyResponse,
  type SidecarTransferRequest,
  type SidecarTransferResponse,
} from './locks/sidecar-wire.js';
// Kubernetes configuration
export {
  findKubernetesConfig,
  loadKubernetesConfig,
  SERVICE_ACCOUNT_TOKEN_PATH,
  type FoundKubernetesConfig,
  type KubernetesEnvironment,
} from './kubernetes/kube-config.loader.js';
export {
  resolveNamespace,
  SERVICE_ACCOUNT_NAMESPACE_PATH,
  type ResolveNamespaceOptions,
} from './kubernetes/namespace.js';
export { validateLeaseName, validateNamespace } from './kubernetes/names.js';
// How foreign text appears in a message or log line (bounded, one line)
export { boundedText, errorText, MAX_FOREIGN_TEXT_LENGTH } from './format.js';
