export * from './errors.js';
// Core: election
export { LeaderElector, type LeaderElectionHealth } from './election/leader-elector.js';
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
  type LeaderTerm,
} from './election/leader-elector.options.js';
export {
  noopElectionObserver,
  type ElectionObservation,
  type ElectionObserver,
  type LockRequestOutcome,
} from './election/election-observer.js';
export { SystemClock, type Clock, type TimerHandle } from './election/clock.js';
export { resolveIdentity } from './election/identity.js';
// Core: locks
export type {
  LeaseRecord,
  LockOperation,
  ResourceLock,
  VersionedLeaseRecord,
} from './locks/resource-lock.js';
export { parseLeaseRecord } from './locks/resource-lock.js';
export {
  DEFAULT_LEASE_REQUEST_TIMEOUT_MS,
  LeaseLock,
  type LeaseLockOptions,
} from './locks/lease.lock.js';
export { FileLock, type FileLockOptions } from './locks/file.lock.js';
export type {
  KubeConfigSource,
  KubernetesApiErrorDetails,
  LeaseApiErrorDetails,
} from './messages.js';
export {
  classifyKubernetesApiError,
  type KubernetesRequest,
} from './locks/kubernetes-api-errors.js';
export {
  LOCK_KINDS,
  selectLock,
  type LockKind,
  type LockKindEntry,
  type LockSelectionOptions,
  type SelectedLock,
} from './locks/lock-selection.js';
export {
  findKubernetesConfig,
  loadKubernetesConfig,
  SERVICE_ACCOUNT_TOKEN_PATH,
  type FoundKubernetesConfig,
  type KubernetesEnvironment,
} from './locks/kube-config.loader.js';
export { validateLeaseName, validateNamespace } from './locks/kubernetes-names.js';
export {
  resolveNamespace,
  SERVICE_ACCOUNT_NAMESPACE_PATH,
  type ResolveNamespaceOptions,
} from './locks/namespace.js';
// Nest layer
export { LeaderModule } from './leader.module.js';
export type { LeaderModuleExtras } from './leader.module-definition.js';
export type {
  LeaderLockKind,
  LeaderModuleOptions,
  LeaderModuleOptionsFactory,
} from './leader-module-options.interface.js';
export { LeaderElectionService } from './leader-election.service.js';
export {
  LeaderOnly,
  type FollowerBehaviour,
  type FollowerContext,
  type LeaderOnlyOptions,
} from './decorators/leader-only.decorator.js';
export {
  OnLeaderChanged,
  OnLeadershipAcquired,
  OnLeadershipLost,
} from './decorators/leadership-events.decorator.js';
export { LeadershipEvent } from './leader.constants.js';
export type { HandlerKind } from './leader-metadata.accessor.js';
export { currentTerm } from './leader-term.context.js';
export { NotLeaderException, type NotLeaderResponseBody } from './not-leader.exception.js';
export { NotLeaderExceptionFilter } from './not-leader.filter.js';
export { LeaderHealthIndicator, type LeaderHealthIndicatorResult } from './leader.health.js';
