/** Types of the `@LeaderOnly()` feature, apart from the code, so no file imports another's types back. */
import type { LeaderElectionTimings, LeaderTerm } from '../../core/leader-elector.options.js';
import type { CatchUpSetting } from '../schedule/catch-up.options.js';

/**
 * What a `@LeaderOnly()` method is to Nest, which decides its default follower behaviour:
 * `http` — a controller route handler (`@Get`, `@Post`…); `rpc` — a microservice message or
 * event handler (`@MessagePattern`, `@EventPattern`); `other` — anything else (scheduled
 * jobs, event listeners, plain calls).
 */
export type HandlerKind = 'http' | 'rpc' | 'other';

/** What a `@LeaderOnly()` call sees when this replica is not the leader. */
export interface FollowerContext {
  /** The instance the method was called on. */
  readonly instance: object;
  readonly methodName: string;
  /** The call's arguments, as received. */
  readonly args: readonly unknown[];
  /** What the method is to Nest (route handler, message handler, or other). */
  readonly kind: HandlerKind;
  /** The election that decided (`'default'` for `forRoot()`'s). */
  readonly election: string;
  /** This replica's identity in that election. */
  readonly identity: string;
  /** The election's current leader, if one is known. */
  readonly leader: string | undefined;
}

/**
 * What a `@LeaderOnly()` method does when called on a follower:
 * - `'skip'`: do not run; return `undefined` (a resolved promise for `async` methods) and log
 *   at debug level.
 * - `'throw'`: do not run; throw (reject, for `async` methods) an error fit for the caller:
 *   an `RpcException` for message handlers, a `NotLeaderException` (HTTP 503) otherwise.
 * - a function: do not run; return what the function returns instead.
 */
export type FollowerBehaviour = 'skip' | 'throw' | ((context: FollowerContext) => unknown);

/** Options of `@LeaderOnly()`. */
export interface LeaderOnlyOptions {
  /**
   * The election that decides: a name given to `LeaderModule.registerElection()`. Default
   * `'default'`, the election of `LeaderModule.forRoot()`. An unknown name fails at bootstrap.
   */
  election?: string;
  /**
   * Behaviour on a follower. Default: `'throw'` for route handlers (`@Get`…: HTTP 503 with
   * `Retry-After`) and message handlers (`@MessagePattern`/`@EventPattern`: `RpcException`),
   * `'skip'` for everything else (`@Cron`, `@Interval`, `@Timeout`, `@OnEvent`, plain calls).
   */
  onFollower?: FollowerBehaviour;
  /**
   * Fenced work: verify leadership with one GET of the Lease (`verifyLeadership()`) around the
   * call, on top of the call-time deadline check.
   * - `'before'`: before running; a failed verification is treated as a follower call
   *   (`onFollower`).
   * - `'before-and-after'`: also after the method settled; if that fails, its result is
   *   withheld and the call throws (rejects) `LeadershipLostDuringWorkError` carrying the term's
   *   fencing token.
   * Each verification costs one GET of the Lease, and the call always returns a promise.
   * Default: no verification.
   */
  verify?: LeaderOnlyVerification;
  /**
   * For a recurring job (`@Cron` with an expression, `@Interval`): what a new leader does about
   * its slots that fell due while no leader ran them (a failover, or a leader that died during
   * a run) — `'skip'` (the default: the behaviour without the ledger, safe for a job that was
   * never written to run late), `'once'` (the newest missed slot, once), `'all'` (every missed
   * slot, oldest first) — never a slot older than the horizon. See `CatchUpSetting` for the
   * limits, and the package's docs/schedule-ledger.md for the guarantee. Default: the
   * module's `catchUp`, else `'skip'`. Ignored on other methods.
   */
  catchUp?: CatchUpSetting;
}

/** When `@LeaderOnly({ verify })` reads the Lease: see {@link LeaderOnlyOptions.verify}. */
export type LeaderOnlyVerification = 'before' | 'before-and-after';

/** {@link LeaderOnlyOptions} as stored on a wrapped method: the election resolved. */
export interface LeaderOnlyMetadata {
  readonly election: string;
  readonly onFollower?: FollowerBehaviour;
  readonly verify?: LeaderOnlyVerification;
  readonly catchUp?: CatchUpSetting;
}

/**
 * One `@LeaderOnly()` method, created once when it is decorated: the same object on every call,
 * so a gate can keep per-method state (the metrics' call counts) in a `WeakMap` without
 * building a key per call.
 */
export interface LeaderOnlySite {
  /** `Class.method`, the `handler` label of `leader_election_leader_only_calls_total`. */
  readonly handler: string;
}

/** How the calls of one `@LeaderOnly()` method ended, counted by its gate. */
export interface LeaderOnlyCallCounts {
  ran: number;
  skipped: number;
  rejected: number;
}

/** Gives a gate the counts of one handler (`Class.method`) of its election. */
export type LeaderOnlyCallCounter = (handler: string) => LeaderOnlyCallCounts;

/**
 * What a gate needs to know about one `@LeaderOnly()` method: built once when the decorator
 * runs, shared by every call (the leader path allocates nothing per call for it).
 */
export interface LeaderOnlyMethod {
  readonly methodName: string;
  readonly site: LeaderOnlySite;
  /** Whether the original is an `async function` (follower results are then promises). */
  readonly isAsync: boolean;
  readonly options: LeaderOnlyMetadata;
  /** The undecorated method. */
  readonly original: (...args: unknown[]) => unknown;
  /** What kind of handler Nest registered it as; resolved at the first call. */
  kind: HandlerKind | undefined;
}

/** What a gate reads of its election (a `LeaderElectionService` fits). */
export interface GatedElection {
  readonly name: string;
  readonly identity: string;
  readonly leader: string | undefined;
  /** The live term, re-checked against the renew deadline at each read. */
  readonly term: LeaderTerm | undefined;
  readonly timings: LeaderElectionTimings;
  /** One authoritative read of the lock (see `LeaderElectionService.verifyTerm`). */
  verifyTerm(term: LeaderTerm, options?: { whileDraining?: boolean }): Promise<boolean>;
}

/** Decides the calls of `@LeaderOnly()` methods of one election. */
export interface LeaderOnlyGateLike {
  /** Calls `method` on `instance` with `args` (the caller's own array), or applies its follower behaviour. */
  invoke(method: LeaderOnlyMethod, instance: object, args: unknown[]): unknown;
}

/** The gates of one application, by election name: what an instance is bound to. */
export type LeaderOnlyGates = ReadonlyMap<string, LeaderOnlyGateLike>;
