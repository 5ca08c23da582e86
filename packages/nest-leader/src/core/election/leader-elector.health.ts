/**
 * The elector's liveness check, as client-go's `healthzadaptor.go`: a wedged leader (one
 * that believes it leads but has not renewed for longer than leaseDuration) or a dead election
 * loop is unhealthy; everything else is healthy. Framework-free.
 */

import { healthMessages } from '../election.messages.js';
import type { LeaderTermLifetime } from '../leader-term.js';

/** Result of `LeaderElector.health()`, as client-go's `HealthzAdaptor.Check`. */
export interface LeaderElectionHealth {
  /** False when the elector is wedged or its election loop stopped unexpectedly. */
  healthy: boolean;
  /** Why it is unhealthy; absent when healthy. */
  reason?: string;
}

/**
 * What {@link checkElectionHealth} looks at: a snapshot of one elector.
 * @internal
 */
export interface ElectionHealthSnapshot {
  /** The lock's description, for the reason. */
  lock: string;
  /**
   * How the election loop stands: `'failed'` (an internal error ended it; see `loopError`),
   * `'lost'` (it stopped after a loss with `onLost: 'stop'`), anything else: fine.
   */
  state: string;
  /** What ended a `'failed'` loop. */
  loopError?: unknown;
  /** The current term, if any (live or draining). */
  term: Pick<LeaderTermLifetime, 'holding' | 'lastRenewStartMs'> | undefined;
  /** Monotonic time now, ms. */
  nowMs: number;
  /** The elector's leaseDuration, ms. */
  leaseDurationMs: number;
}

/**
 * Unhealthy only when the loop died or stopped after a loss (client-go's process would have
 * exited), or when wedged: the elector still holds the Lease by its own account (the term has
 * not lost it) but the start of its last successful write is more than leaseDuration +
 * `toleranceMs` ago, i.e. its timers could not run and someone else may lead now. A term that
 * ended and is draining is healthy: the work is the application's, the election is fine.
 * @param toleranceMs - extra time past lease expiry to tolerate, ms
 * @internal
 */
export function checkElectionHealth(
  snapshot: ElectionHealthSnapshot,
  toleranceMs: number,
): LeaderElectionHealth {
  const { lock, term, leaseDurationMs } = snapshot;
  if (snapshot.state === 'failed') {
    return { healthy: false, reason: healthMessages.loopFailed(lock, snapshot.loopError) };
  }
  if (snapshot.state === 'lost') {
    return { healthy: false, reason: healthMessages.stoppedAfterLoss(lock) };
  }
  if (term && !term.holding.aborted) {
    const sinceRenewMs = snapshot.nowMs - term.lastRenewStartMs;
    if (sinceRenewMs > leaseDurationMs + toleranceMs) {
      const reason = healthMessages.leaseExpired(lock, sinceRenewMs, leaseDurationMs, toleranceMs);
      return { healthy: false, reason };
    }
  }
  return { healthy: true };
}
