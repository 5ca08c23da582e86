/**
 * Until the elector calls its `observer` itself, feeds an {@link ElectionObserver} from the
 * elector's callbacks (term started/ended, new leader). Replaced by the `observer` option once
 * the core wiring lands.
 */
import type {
  ElectionObserver,
  LeaderCallbacks,
  LeaderElector,
  LeaderTermEndedError,
} from 'nest-leader';

/** Callbacks that report to `observer` as the elector `elector()` would. */
export function bridgeObserver(
  election: string,
  identity: string,
  observer: ElectionObserver,
  elector: () => LeaderElector,
  callbacks: LeaderCallbacks = {},
): LeaderCallbacks {
  const startedAtMs = new Map<number, number>();
  return {
    onStartedLeading: (term) => {
      startedAtMs.set(term.leaseTransitions, performance.now());
      observer.leaderObserved?.({
        election,
        identity,
        holderIdentity: identity,
        leaseTransitions: term.leaseTransitions,
      });
      observer.termStarted?.({ election, identity, term });
      callbacks.onStartedLeading?.(term);
    },
    onStoppedLeading: (term) => {
      const reason = (term.signal.reason as LeaderTermEndedError).reason;
      const durationMs = performance.now() - (startedAtMs.get(term.leaseTransitions) ?? 0);
      observer.termEnded?.({ election, identity, term, reason, durationMs });
      return callbacks.onStoppedLeading?.(term);
    },
    onNewLeader: (holder) => {
      if (holder !== identity) {
        observer.leaderObserved?.({
          election,
          identity,
          holderIdentity: holder,
          leaseTransitions: elector().leaseTransitions ?? 0,
        });
      }
      callbacks.onNewLeader?.(holder);
    },
  };
}
