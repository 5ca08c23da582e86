/**
 * A leader term as users hold it: the fencing token, when it began, and call-time liveness.
 * Its own file so the observer seam and the options can both name it without a cycle.
 */

/** A leader term: from acquiring the Lease to losing, releasing or stepping down. */
export interface LeaderTerm {
  /**
   * `leaseTransitions` of the Lease when this term began: strictly increasing per Lease
   * object, so downstream systems can use it as a fencing token to reject stale leaders.
   */
  readonly leaseTransitions: number;
  /** When this term began (wall clock; the `acquireTime` written to the Lease). */
  readonly acquiredAt: Date;
  /**
   * Aborted the moment the term ends, before `onStoppedLeading` is called. Its `reason` is a
   * `LeaderTermEndedError`. Pass it to leader-only work so it stops with the term. Reading
   * `signal.aborted` or calling `signal.throwIfAborted()` re-checks the renew deadline, like
   * {@link LeaderTerm.isLive}; listeners (`'abort'` events, `fetch`) fire when the elector's
   * timer runs, which after a pause (SIGSTOP, long GC) may be after other due timers and I/O.
   */
  readonly signal: AbortSignal;
  /**
   * True while this term is live: not ended, and its renew deadline not passed on the local
   * monotonic clock — re-checked at call time, so a process paused past the deadline reads
   * `false` on waking, before any timer of the elector has run (and the term ends right there).
   * Check it before each unit of leader-only work.
   */
  isLive(): boolean;
  /**
   * Throws if this term is no longer live (same check as {@link LeaderTerm.isLive}).
   * @throws LeaderTermEndedError (the `signal`'s reason) when the term has ended.
   */
  throwIfEnded(): void;
}
