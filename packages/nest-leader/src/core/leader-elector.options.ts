/**
 * Options of {@link LeaderElector}: their meaning, units, defaults and validation
 * (as client-go's `LeaderElectionConfig` and `NewLeaderElector`).
 */

import { InvalidLeaderElectionOptionError } from '../errors.js';
import type { AdvertisedCandidate } from '../locks/advertised-candidates.js';
import type { Candidacy } from '../locks/candidacy/candidacy.js';
import {
  isCandidateIdentity,
  isPodTemplateHash,
  MAX_IDENTITY_LENGTH,
  MAX_POD_TEMPLATE_HASH_LENGTH,
} from '../locks/peer-bounds.js';
import type { ResourceLock } from '../locks/resource-lock.js';
import { type Clock, SystemClock } from './clock.js';
import type { ElectionObserver } from './election-observer.js';
import { electionMessages, electionOptionRules } from './election.messages.js';
import { rejectUnknownOptions } from './option-names.js';

/** Default `leaseDurationSeconds`, as client-go's and kube-controller-manager's. */
export const DEFAULT_LEASE_DURATION_SECONDS = 15;
/** Default `renewDeadlineSeconds`. */
export const DEFAULT_RENEW_DEADLINE_SECONDS = 10;
/** Default `retryPeriodSeconds`. */
export const DEFAULT_RETRY_PERIOD_SECONDS = 2;
/**
 * The default `newerTemplateSettleSeconds` at a `leaseDurationSeconds`, s: the larger of 45 s —
 * above Kubernetes' default liveness budget (`periodSeconds` 10 × `failureThreshold` 3 +
 * `timeoutSeconds` 1 = 31 s after the startup probe passed), with time for the kill and the
 * pod's withdrawal to be seen — and 2 × `leaseDurationSeconds` (the earlier default, kept for
 * long leases so that no settle time got shorter).
 */
export function defaultNewerTemplateSettleSeconds(leaseDurationSeconds: number): number {
  return Math.max(45, 2 * leaseDurationSeconds);
}
/**
 * client-go's `JitterFactor`, kept for its validation rule renewDeadline > 1.2 × retryPeriod
 * (the leader must be able to retry a renewal before its deadline).
 */
export const JITTER_FACTOR = 1.2;
/**
 * Acquire retries wait retryPeriod × [1, 1 + ACQUIRE_JITTER). client-go waits
 * retryPeriod × [1, 2.2); the narrower spread bounds how long a released Lease stays
 * unclaimed (≤ 1.2 × retryPeriod) while still de-synchronising candidates.
 */
export const ACQUIRE_JITTER = 0.2;
/** Longest identity accepted (client-go's holderIdentity is free-form; we keep it readable). */
export { MAX_IDENTITY_LENGTH } from '../locks/peer-bounds.js';
/**
 * Smallest `retryPeriodSeconds` accepted: 0.1 s, i.e. at most 10 requests per second per
 * candidate — already client-go's default client-side rate limit (QPS 5, burst 10). Shorter
 * periods only add load on the API server: a request rarely completes faster than that.
 */
export const MIN_RETRY_PERIOD_SECONDS = 0.1;
/** Largest `leaseTransitions` a Lease holds (`Lease.spec.leaseTransitions` is an int32). */
export const MAX_LEASE_TRANSITIONS = 2 ** 31 - 1;
/** Longest `podTemplateHash` (a Kubernetes label value). */
export { MAX_POD_TEMPLATE_HASH_LENGTH } from '../locks/peer-bounds.js';

import type { LeaderTerm } from './leader-term.js';

export type { LeaderTerm } from './leader-term.js';

/** Leadership callbacks, as client-go's `LeaderCallbacks`. Exceptions are logged, never rethrown. */
export interface LeaderCallbacks {
  /** Called when this candidate starts a term. Must not block; start work and return. */
  onStartedLeading?(term: LeaderTerm): void;
  /**
   * Called when a term ends (after `term.signal` aborted). If it returns a promise, the
   * elector awaits it before releasing the Lease on `stop()` and before campaigning again
   * after a loss: drain in-flight leader-only work here. On `stop()` the Lease is still
   * renewed while it runs (unless renewing fails past renewDeadline), so no other candidate
   * takes over under the draining work; after a loss the Lease is already gone.
   */
  onStoppedLeading?(term: LeaderTerm): void | Promise<void>;
  /** Called whenever the observed holder changes to a non-empty identity, including to ourselves. */
  onNewLeader?(identity: string): void;
}

/** Where the elector logs; the Nest layer adapts Nest's `Logger`. Messages are single lines. */
export interface ElectionLogger {
  /** Per-attempt detail (each acquire/renew try); off in production. */
  debug(message: string): void;
  /** Leadership changes and the start line: once per event. */
  info(message: string): void;
  /** Recoverable trouble: failed renewals, slow drains, misconfiguration that still works. */
  warn(message: string): void;
  /** Failures that need a person: RBAC denials, a dead election loop. */
  error(message: string): void;
}

/** The default logger: the console, info and above, each line prefixed `[nest-leader]`. */
export const consoleElectionLogger: ElectionLogger = Object.freeze({
  debug: () => undefined,
  info: (message: string) => console.info(`[nest-leader] ${message}`),
  warn: (message: string) => console.warn(`[nest-leader] ${message}`),
  error: (message: string) => console.error(`[nest-leader] ${message}`),
});

/** Timing of an election, in seconds, as client-go's `LeaseDuration`/`RenewDeadline`/`RetryPeriod`. */
export interface LeaderElectionTimings {
  /**
   * How long, in whole seconds, candidates wait after observing the last change of the Lease
   * before taking it over (`Lease.spec.leaseDurationSeconds`). Default 15.
   */
  leaseDurationSeconds: number;
  /** How long, in seconds, the leader keeps trying to renew before it steps down. Default 10. */
  renewDeadlineSeconds: number;
  /** Seconds between attempts to acquire or renew. Default 2. */
  retryPeriodSeconds: number;
}

/** The names of {@link LeaderElectionTimings}, each once (the compiler checks it). */
export const LEADER_ELECTION_TIMING_NAMES = Object.freeze(
  Object.keys({
    leaseDurationSeconds: true,
    renewDeadlineSeconds: true,
    retryPeriodSeconds: true,
  } satisfies Record<keyof LeaderElectionTimings, true>),
) as readonly (keyof LeaderElectionTimings)[];

/** Options of {@link LeaderElector}. */
export interface LeaderElectorOptions extends Partial<LeaderElectionTimings> {
  /** Where the election record lives: `LeaseLock`, `FileLock` or `MemoryLock`. */
  lock: ResourceLock;
  /** This candidate's unique identity (non-empty, at most 128 characters); see `resolveIdentity()`. */
  identity: string;
  /** On `stop()`, hand the Lease over at once by clearing its holder. Default true. */
  releaseOnStop?: boolean;
  /**
   * Followers watch the lock when it can be watched (`LeaseLock`: RBAC `watch` on the Lease),
   * so they see renewals as they happen and take a released Lease the moment it is released,
   * reading it only when it would expire; while the watch is down they poll every
   * retryPeriod × [1, 1.2) as without it. Safety never depends on the watch: a takeover is
   * always decided on a fresh read, leaseDuration after the last change seen. `false` always
   * polls (for API servers or proxies where watches misbehave). Default true.
   */
  watchLease?: boolean;
  /**
   * After losing leadership: `'recampaign'` (default) joins the election again with a new
   * term; `'stop'` stops campaigning (client-go's Run returns; `health()` then reports unhealthy).
   */
  onLost?: 'recampaign' | 'stop';
  /** Leadership callbacks. */
  callbacks?: LeaderCallbacks;
  /**
   * Name of this election in logs and observations (as client-go's `LeaderElectionConfig.Name`,
   * the `name` label of its metrics). Default: the lock's `description`.
   */
  name?: string;
  /** Receives what happens to the election (metrics, Events, tests). Default: does nothing. */
  observer?: ElectionObserver;
  /**
   * Source of time (in `LeaderModule`, also of the drain timeout); default `SystemClock`.
   * Tests inject `ManualClock` from `nest-leader/testing`.
   */
  clock?: Clock;
  /** Where to log; default the console (info and above). */
  logger?: ElectionLogger;
  /**
   * Uniform random numbers in [0, 1) for the acquire jitter; default `Math.random`.
   * Tests inject a constant to make retries deterministic.
   */
  random?: () => number;
  /**
   * Extension point for the schedule ledger kept beside the election record
   * (`LeaseRecord.scheduleLedger`): called before every write the elector makes (acquisition,
   * renewal, release) with the ledger text stored in the record it writes over and the
   * `leaseTransitions` of the record it writes; returns the text to write, or `undefined` to
   * keep the stored text. So the leader's ledger travels with its renewals, without a request
   * of its own. A throw is logged and the stored text kept. Default: the stored text is kept.
   */
  scheduleLedger?: ScheduleLedgerWriter;
  /**
   * Which version of the application this candidate runs: its pod's `pod-template-hash` label
   * (the same for every pod of one Deployment revision). Advertised in the election record, so
   * a leader handing off can prefer this version (the order: `preferredCandidate`) — during a
   * rollout, one that will not be replaced next (see "Preferred replicas" in the package's docs/handoff-and-rollouts.md). Default: the
   * `POD_TEMPLATE_HASH` environment variable (downward API:
   * `fieldRef: { fieldPath: "metadata.labels['pod-template-hash']" }`), if set.
   * A label value: 1–63 letters, digits, `-`, `_`, `.`.
   */
  podTemplateHash?: string;
  /**
   * When this candidate's Pod was created (its `metadata.creationTimestamp`). Advertised beside
   * `podTemplateHash` and used to date the pod's template when a leader looks for a newer one
   * (`newestTemplate`): unlike the elector's start, a container restart does not renew it, so
   * an old pod whose container restarts during a rollout does not make the old template look
   * newest. Without it the template is dated by the candidates' starts. `LeaderModule` reads
   * it from the API server at startup (one `get` of the pod `POD_NAME` in `POD_NAMESPACE`,
   * at most 5 s; RBAC `get` on `pods`) when the lock is a Lease and a `podTemplateHash` is
   * set; when it cannot, it logs one warning and leaves it unset. A valid `Date`; a time after
   * this elector's creation (clock skew) is advertised as that creation.
   */
  podCreationTimestamp?: Date;
  /**
   * This candidate's priority when a leader chooses whom to hand off to: higher is preferred,
   * after the pod template (the order: `preferredCandidate`).
   * A whole number in the int32 range. Default 0. A candidate advertises itself (one write at
   * start, one at stop; none in between) only when it has a `podTemplateHash` or a
   * `priority`, and only on locks that store advertisements (`LeaseLock`, `MemoryLock`).
   */
  priority?: number;
  /**
   * On `stop()`, when `releaseOnStop` is on, hand the Lease to the preferred candidate
   * (`transferLeadership()` without a target) instead of releasing it to anyone — in the same
   * read and write a release costs, within the same renewDeadline. Falls back to the release
   * when no other candidate advertises itself or the handoff write fails. Default true.
   */
  handoffOnStop?: boolean;
  /**
   * While leading, hand the Lease over — gracefully, as `transferLeadership()`: the term ends
   * and drains first — when a candidate of a higher `priority` than this one's (default 0)
   * advertises itself; among several, the one `transferLeadership()` without a target would
   * choose. The leader sees a new advertisement at its next renewal (the write conflicts, so it
   * reads the record); the term the target begins has reason `preferred`. Never by force: a
   * leader without this option keeps the Lease. Needs a lock that stores advertisements
   * (`LeaseLock`, `MemoryLock`; otherwise a warning at construction). Default false.
   */
  yieldToHigherPriority?: boolean;
  /**
   * How long, in seconds, a stopping leader with a `podTemplateHash` (and `handoffOnStop`)
   * leads on — renewing, its term and work running — while it waits for a candidate of a newer
   * pod template to hand to (a rollout's new pods advertise themselves only once they have
   * started). Leading on costs no time without a leader, only shutdown time, so set it to
   * about how long your new pods take to start, and keep `terminationGracePeriodSeconds`
   * above it plus the drain. A positive finite number. Default `renewDeadlineSeconds`.
   */
  newerTemplateWaitSeconds?: number;
  /**
   * While leading, hand the Lease over — gracefully, as `transferLeadership()`: the term ends
   * and drains first — to a candidate of a newer pod template (`podTemplateHash`; the newest as
   * the preference ranks them) once that candidate has stayed advertised, unchanged, for
   * `newerTemplateSettleSeconds` by this leader's observation: a rollout's new pod takes over
   * from the running leader as soon as it has proven it stays up, so a Deployment may keep the
   * old leader until then (`maxUnavailable` below 100 %), and a new template that never starts
   * — an image that cannot be pulled, a pod that crashes or fails its probes within the settle
   * time — takes nothing from it. After a newer template's leader was lost without a handoff
   * (its Lease expired), no leader yields to that template for a backoff of 5 min, doubling
   * with each such loss in a row up to 1 h (recorded on the Lease: `LeaseRecord.templateBackoff`),
   * so a crash-looping template cannot bounce leadership back and forth. Needs a
   * `podTemplateHash` (without one it does nothing) and a lock that stores advertisements.
   * Default true.
   */
  yieldToNewerTemplate?: boolean;
  /**
   * How long, in seconds, a candidate of a newer pod template must stay advertised, unchanged,
   * before the leader yields to it (`yieldToNewerTemplate`). Keep it above the time a broken pod
   * takes to fail — its liveness budget (`periodSeconds × failureThreshold + timeoutSeconds`
   * after the startup probe passed) and how soon after starting your app would crash — plus a
   * few seconds for the kill and its withdrawal to be seen: a pod killed by its liveness probe
   * after the settle time is yielded to, takes the Lease and loses it again (one needless
   * transition each time, no overlap). It delays each rollout's handover by that much;
   * leadership does not lapse meanwhile. A positive finite number. Default the larger of 45 s
   * (Kubernetes' default liveness probe kills a never-healthy pod 31 s after its start) and
   * `2 × leaseDurationSeconds`: {@link defaultNewerTemplateSettleSeconds}.
   */
  newerTemplateSettleSeconds?: number;
  /**
   * Take part in Kubernetes' coordinated leader election (KEP-4355) through this candidacy
   * (`LeaseCandidateRegistration`, whose `identity` must be this elector's): the API server's
   * election controller picks the holder and this candidate only follows the Lease, as
   * client-go with `Coordinated: true`. It registers when started and withdraws on stop (before
   * the release); it never creates the Lease and never takes a free or expired one; it leads
   * while the Lease names it (a Lease the controller names it in carries no `acquireTime`),
   * taking up the term with a write of `leaseTransitions + 1` and `acquireTime` (the controller
   * never changes `leaseTransitions`: this keeps the fencing token strictly increasing); it
   * keeps `spec.strategy`. Default: not coordinated (an ordinary candidate).
   */
  coordinated?: Candidacy;
}

/** See {@link LeaderElectorOptions.scheduleLedger}. */
export type ScheduleLedgerWriter = (
  stored: string | undefined,
  leaseTransitions: number,
) => string | undefined;

/**
 * A duration option in seconds.
 * @throws InvalidLeaderElectionOptionError naming `name` unless a positive finite number.
 */
function positiveSeconds(name: keyof LeaderElectorOptions, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidLeaderElectionOptionError(name, electionOptionRules.positiveSeconds, value);
  }
  return value;
}

/**
 * A boolean option's value, `fallback` when unset.
 * @throws InvalidLeaderElectionOptionError naming `name` when set to anything but a boolean.
 */
function booleanOption(
  name: keyof LeaderElectorOptions,
  value: unknown,
  fallback: boolean,
): boolean {
  const resolved = value ?? fallback;
  if (typeof resolved !== 'boolean') {
    throw new InvalidLeaderElectionOptionError(name, electionOptionRules.boolean, resolved);
  }
  return resolved;
}

/** A number for messages: at most 4 decimals, no binary noise (`10.8`, not `10.799999999999999`). */
function clean(value: number): string {
  return String(Number(value.toFixed(4)));
}

/**
 * Which of two related options to name in a message: the one the user set (`b` only if `a`
 * was left to its default), so an error never names an option the user did not write.
 */
function blame<K extends keyof LeaderElectionTimings>(
  timings: Partial<LeaderElectionTimings>,
  a: K,
  b: keyof LeaderElectionTimings,
): K | keyof LeaderElectionTimings {
  return timings[a] === undefined && timings[b] !== undefined ? b : a;
}

function checkSeconds(option: keyof LeaderElectionTimings, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidLeaderElectionOptionError(option, electionOptionRules.positiveSeconds, value);
  }
  return value;
}

/**
 * `timings` with the defaults (15/10/2 s, as client-go's examples) in place of unset ones; not
 * checked (see {@link validateLeaderElectionTimings}). The one place the defaults are applied.
 */
export function withDefaultTimings(
  timings: Partial<LeaderElectionTimings> = {},
): LeaderElectionTimings {
  return {
    leaseDurationSeconds: timings.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS,
    renewDeadlineSeconds: timings.renewDeadlineSeconds ?? DEFAULT_RENEW_DEADLINE_SECONDS,
    retryPeriodSeconds: timings.retryPeriodSeconds ?? DEFAULT_RETRY_PERIOD_SECONDS,
  };
}

/**
 * Applies defaults to `timings` (15/10/2 s) and checks client-go's rules: all positive and finite,
 * `leaseDurationSeconds` a whole number (the Lease field is an int32),
 * leaseDuration > renewDeadline > 1.2 × retryPeriod.
 * @returns the complete timings.
 * @throws InvalidLeaderElectionOptionError naming the option and the rule it breaks.
 */
export function validateLeaderElectionTimings(
  timings: Partial<LeaderElectionTimings> = {},
): LeaderElectionTimings {
  const given = withDefaultTimings(timings);
  const leaseDurationSeconds = checkSeconds('leaseDurationSeconds', given.leaseDurationSeconds);
  const renewDeadlineSeconds = checkSeconds('renewDeadlineSeconds', given.renewDeadlineSeconds);
  const retryPeriodSeconds = checkSeconds('retryPeriodSeconds', given.retryPeriodSeconds);
  if (!Number.isInteger(leaseDurationSeconds) || leaseDurationSeconds > 2 ** 31 - 1) {
    throw new InvalidLeaderElectionOptionError(
      'leaseDurationSeconds',
      electionOptionRules.wholeLeaseDuration,
      leaseDurationSeconds,
    );
  }
  if (retryPeriodSeconds < MIN_RETRY_PERIOD_SECONDS) {
    throw new InvalidLeaderElectionOptionError(
      'retryPeriodSeconds',
      electionOptionRules.minRetryPeriod(MIN_RETRY_PERIOD_SECONDS),
      retryPeriodSeconds,
    );
  }
  if (!(leaseDurationSeconds > renewDeadlineSeconds)) {
    const option = blame(timings, 'renewDeadlineSeconds', 'leaseDurationSeconds');
    throw new InvalidLeaderElectionOptionError(
      option,
      option === 'renewDeadlineSeconds'
        ? electionOptionRules.renewDeadlineBelowLeaseDuration(clean(leaseDurationSeconds))
        : electionOptionRules.leaseDurationAboveRenewDeadline(clean(renewDeadlineSeconds)),
      option === 'renewDeadlineSeconds' ? renewDeadlineSeconds : leaseDurationSeconds,
    );
  }
  if (!(renewDeadlineSeconds > JITTER_FACTOR * retryPeriodSeconds)) {
    const option = blame(timings, 'renewDeadlineSeconds', 'retryPeriodSeconds');
    throw new InvalidLeaderElectionOptionError(
      option,
      option === 'renewDeadlineSeconds'
        ? electionOptionRules.renewDeadlineAboveRetries(
            JITTER_FACTOR,
            clean(JITTER_FACTOR * retryPeriodSeconds),
          )
        : electionOptionRules.retryPeriodBelowRenewDeadline(
            clean(renewDeadlineSeconds),
            JITTER_FACTOR,
            clean(renewDeadlineSeconds / JITTER_FACTOR),
          ),
      option === 'renewDeadlineSeconds' ? renewDeadlineSeconds : retryPeriodSeconds,
    );
  }
  return { leaseDurationSeconds, renewDeadlineSeconds, retryPeriodSeconds };
}

/**
 * Checks `podTemplateHash` (see {@link LeaderElectorOptions.podTemplateHash}).
 * @throws InvalidLeaderElectionOptionError naming `podTemplateHash`.
 */
function validatePodTemplateHash(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!isPodTemplateHash(value)) {
    throw new InvalidLeaderElectionOptionError(
      'podTemplateHash',
      electionOptionRules.podTemplateHash(MAX_POD_TEMPLATE_HASH_LENGTH),
      value,
    );
  }
  return value;
}

/**
 * Checks `podCreationTimestamp` (see {@link LeaderElectorOptions.podCreationTimestamp}).
 * @throws InvalidLeaderElectionOptionError naming `podCreationTimestamp`.
 */
function validatePodCreationTimestamp(value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new InvalidLeaderElectionOptionError(
      'podCreationTimestamp',
      electionOptionRules.podCreationTimestamp,
      value,
    );
  }
  return value;
}

/**
 * Checks `priority` (see {@link LeaderElectorOptions.priority}).
 * @throws InvalidLeaderElectionOptionError naming `priority`.
 */
function validatePriority(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < -(2 ** 31) ||
    value >= 2 ** 31
  ) {
    throw new InvalidLeaderElectionOptionError('priority', electionOptionRules.priority, value);
  }
  return value;
}

/**
 * Checks a candidate identity: a non-empty string of at most 128 printable characters (no
 * control, format or line-separator characters: an identity with a newline would forge log
 * lines).
 * @throws InvalidLeaderElectionOptionError naming `option`.
 */
export function validateIdentity(identity: unknown, option = 'identity'): string {
  if (
    typeof identity !== 'string' ||
    identity.length === 0 ||
    identity.length > MAX_IDENTITY_LENGTH
  ) {
    throw new InvalidLeaderElectionOptionError(
      option,
      electionOptionRules.identity(MAX_IDENTITY_LENGTH),
      identity,
    );
  }
  if (!isCandidateIdentity(identity)) {
    throw new InvalidLeaderElectionOptionError(
      option,
      electionOptionRules.printableIdentity,
      identity,
    );
  }
  return identity;
}

/**
 * Every option of {@link LeaderElector}, and what it is: a `'setting'`, a value users choose
 * (identity, timings, behaviour) that an integration such as `LeaderModule` takes from its
 * own users and passes through unchanged, or `'wiring'`, a collaborator or name the embedding
 * code provides (the lock, callbacks, observer, logger…). The one list of the elector's
 * options: the compiler insists every option of {@link LeaderElectorOptions} is here, and a
 * new setting reaches `LeaderModule`'s options without a change to the Nest layer.
 */
export const LEADER_ELECTOR_OPTION_KINDS = Object.freeze({
  lock: 'wiring',
  identity: 'setting',
  leaseDurationSeconds: 'setting',
  renewDeadlineSeconds: 'setting',
  retryPeriodSeconds: 'setting',
  releaseOnStop: 'setting',
  watchLease: 'setting',
  onLost: 'setting',
  callbacks: 'wiring',
  name: 'wiring',
  observer: 'wiring',
  clock: 'setting',
  logger: 'wiring',
  random: 'wiring',
  scheduleLedger: 'wiring',
  podTemplateHash: 'setting',
  podCreationTimestamp: 'setting',
  priority: 'setting',
  handoffOnStop: 'setting',
  yieldToHigherPriority: 'setting',
  newerTemplateWaitSeconds: 'setting',
  yieldToNewerTemplate: 'setting',
  newerTemplateSettleSeconds: 'setting',
  coordinated: 'wiring',
} as const satisfies Record<keyof LeaderElectorOptions, 'setting' | 'wiring'>);

/** Names of the `'setting'` options in {@link LEADER_ELECTOR_OPTION_KINDS}. */
export type LeaderElectorSettingName = {
  [
    K in keyof typeof LEADER_ELECTOR_OPTION_KINDS
  ]: (typeof LEADER_ELECTOR_OPTION_KINDS)[K] extends 'setting' ? K : never;
}[keyof typeof LEADER_ELECTOR_OPTION_KINDS];

/**
 * The options of {@link LeaderElector} users choose (see {@link LEADER_ELECTOR_OPTION_KINDS}):
 * what an integration passes through from its own options.
 */
export type LeaderElectorSettings = Pick<LeaderElectorOptions, LeaderElectorSettingName>;

/** Every option {@link LeaderElector} knows; anything else is rejected as a likely typo. */
export const LEADER_ELECTOR_OPTION_NAMES = Object.freeze(
  Object.keys(LEADER_ELECTOR_OPTION_KINDS),
) as readonly (keyof LeaderElectorOptions)[];

/** The names of {@link LeaderElectorSettings}, in the order of {@link LEADER_ELECTOR_OPTION_KINDS}. */
export const LEADER_ELECTOR_SETTING_NAMES = Object.freeze(
  LEADER_ELECTOR_OPTION_NAMES.filter((name) => LEADER_ELECTOR_OPTION_KINDS[name] === 'setting'),
) as readonly LeaderElectorSettingName[];

/** {@link LeaderElectorOptions} with defaults applied and durations in milliseconds. */
export interface ResolvedLeaderElectorOptions {
  lock: ResourceLock;
  identity: string;
  /** The election's name in observations; default the lock's description. */
  name: string;
  /** `undefined`: the elector uses `noopElectionObserver`. */
  observer: ElectionObserver | undefined;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Per-request timeout: {@link lockRequestTimeoutMs}. */
  requestTimeoutMs: number;
  releaseOnStop: boolean;
  watchLease: boolean;
  onLost: 'recampaign' | 'stop';
  callbacks: LeaderCallbacks;
  random: () => number;
  scheduleLedger: ScheduleLedgerWriter | undefined;
  /**
   * What this candidate advertises (`podTemplateHash`, `priority`, `startedAt` = the
   * elector's creation on its clock, `podCreationTimestamp`); `undefined` when it has neither a
   * hash nor a priority, or the lock does not store advertisements.
   */
  advertisement: AdvertisedCandidate | undefined;
  handoffOnStop: boolean;
  yieldToHigherPriority: boolean;
  /** `newerTemplateWaitSeconds` in ms (default renewDeadline). */
  newerTemplateWaitMs: number;
  yieldToNewerTemplate: boolean;
  /** `newerTemplateSettleSeconds` in ms (default max(45 s, 2 × leaseDuration)). */
  newerTemplateSettleMs: number;
  /** `undefined`: an ordinary (not coordinated) candidate. */
  coordinated: Candidacy | undefined;
  /** Default `SystemClock`. */
  clock: Clock;
  /** Default {@link consoleElectionLogger}. */
  logger: ElectionLogger;
}

/**
 * Validates every option and applies defaults.
 * @throws InvalidLeaderElectionOptionError on the first broken rule.
 */
export function resolveLeaderElectorOptions(
  options: LeaderElectorOptions,
): ResolvedLeaderElectorOptions {
  const lock = options?.lock;
  if (
    !lock ||
    typeof lock.get !== 'function' ||
    typeof lock.create !== 'function' ||
    typeof lock.update !== 'function'
  ) {
    throw new InvalidLeaderElectionOptionError('lock', electionOptionRules.lock, lock);
  }
  rejectUnknownOptions(options, LEADER_ELECTOR_OPTION_NAMES, 'LeaderElector');
  const identity = validateIdentity(options.identity);
  const timings = validateLeaderElectionTimings(options);
  const name = options.name ?? lock.description;
  if (typeof name !== 'string' || name === '') {
    throw new InvalidLeaderElectionOptionError('name', electionOptionRules.name, name);
  }
  const observer = options.observer;
  if (observer !== undefined && (typeof observer !== 'object' || observer === null)) {
    throw new InvalidLeaderElectionOptionError('observer', electionOptionRules.observer, observer);
  }
  const releaseOnStop = booleanOption('releaseOnStop', options.releaseOnStop, true);
  const watchLease = booleanOption('watchLease', options.watchLease, true);
  const onLost = options.onLost ?? 'recampaign';
  if (onLost !== 'recampaign' && onLost !== 'stop') {
    throw new InvalidLeaderElectionOptionError('onLost', electionOptionRules.onLost, onLost);
  }
  const scheduleLedger = options.scheduleLedger;
  if (scheduleLedger !== undefined && typeof scheduleLedger !== 'function') {
    throw new InvalidLeaderElectionOptionError(
      'scheduleLedger',
      electionOptionRules.scheduleLedger,
      scheduleLedger,
    );
  }
  const handoffOnStop = booleanOption('handoffOnStop', options.handoffOnStop, true);
  const yieldToHigherPriority = booleanOption(
    'yieldToHigherPriority',
    options.yieldToHigherPriority,
    false,
  );
  const logger = options.logger ?? consoleElectionLogger;
  if (yieldToHigherPriority && lock.storesCandidates !== true) {
    logger.warn(electionMessages.yieldWithoutAdvertisements(lock.description));
  }
  const newerTemplateWaitSeconds = options.newerTemplateWaitSeconds ?? timings.renewDeadlineSeconds;
  if (
    typeof newerTemplateWaitSeconds !== 'number' ||
    !Number.isFinite(newerTemplateWaitSeconds) ||
    newerTemplateWaitSeconds <= 0
  ) {
    throw new InvalidLeaderElectionOptionError(
      'newerTemplateWaitSeconds',
      electionOptionRules.positiveSeconds,
      newerTemplateWaitSeconds,
    );
  }
  const yieldToNewerTemplate = booleanOption(
    'yieldToNewerTemplate',
    options.yieldToNewerTemplate,
    true,
  );
  const newerTemplateSettleSeconds = positiveSeconds(
    'newerTemplateSettleSeconds',
    options.newerTemplateSettleSeconds ??
      defaultNewerTemplateSettleSeconds(timings.leaseDurationSeconds),
  );
  const clock = options.clock ?? new SystemClock();
  const podTemplateHash = validatePodTemplateHash(
    options.podTemplateHash ?? (process.env.POD_TEMPLATE_HASH || undefined),
  );
  const podCreationTimestamp = validatePodCreationTimestamp(options.podCreationTimestamp);
  const priority = validatePriority(options.priority);
  let advertisement: AdvertisedCandidate | undefined;
  if (lock.storesCandidates === true && (podTemplateHash !== undefined || priority !== undefined)) {
    const startedAt = clock.wallNow();
    advertisement = { identity, priority: priority ?? 0, startedAt };
    if (podTemplateHash !== undefined) advertisement.podTemplateHash = podTemplateHash;
    if (podCreationTimestamp !== undefined) {
      advertisement.podCreationTimestamp = new Date(
        Math.min(podCreationTimestamp.getTime(), startedAt.getTime()),
      );
    }
  }
  const coordinated = options.coordinated;
  if (
    coordinated !== undefined &&
    (typeof coordinated?.run !== 'function' || coordinated.identity !== identity)
  ) {
    throw new InvalidLeaderElectionOptionError(
      'coordinated',
      electionOptionRules.coordinated(identity),
      coordinated?.identity,
    );
  }
  const renewDeadlineMs = timings.renewDeadlineSeconds * 1000;
  return {
    lock,
    identity,
    name,
    observer,
    leaseDurationMs: timings.leaseDurationSeconds * 1000,
    renewDeadlineMs,
    retryPeriodMs: timings.retryPeriodSeconds * 1000,
    requestTimeoutMs: lockRequestTimeoutMs(timings.renewDeadlineSeconds),
    releaseOnStop,
    watchLease,
    onLost,
    callbacks: options.callbacks ?? {},
    random: options.random ?? Math.random,
    scheduleLedger,
    advertisement,
    handoffOnStop,
    yieldToHigherPriority,
    newerTemplateWaitMs: newerTemplateWaitSeconds * 1000,
    yieldToNewerTemplate,
    newerTemplateSettleMs: newerTemplateSettleSeconds * 1000,
    coordinated,
    clock,
    logger,
  };
}

/**
 * How long one request to the lock may take before the elector gives up on it: half the
 * renew deadline, at least 1 s. The one formula of the request timeout: the elector, the sharded
 * election's member Lease, `LeaderElectionService.verifyTerm()` and the sidecar's transfer
 * endpoint all use it.
 * @param renewDeadlineSeconds - the election's renew deadline, seconds
 * @returns the timeout, milliseconds
 */
export function lockRequestTimeoutMs(renewDeadlineSeconds: number): number {
  return Math.max(1000, (renewDeadlineSeconds * 1000) / 2);
}
