/**
 * Several observers as one: the elector takes a single `observer`; metrics, Events and pod
 * labels are three (a sharded election's: metrics and Events). Framework-free.
 */
import type { ElectionObserver } from '../core/election-observer.js';
import type { ShardObserver } from '../sharding/shard-observer.js';

/** An observer that may have writes in flight (Events, pod labels). */
export interface Flushable {
  /** Resolves once the writes queued so far have settled (the elector awaits it before release). */
  flush?(): Promise<void>;
}

/** Every method of the observer, checked both ways: a new event cannot be left out here. */
const METHODS = Object.keys({
  termStarted: true,
  termEnded: true,
  renewed: true,
  renewSlowPath: true,
  lockRequest: true,
  leaderObserved: true,
} satisfies Record<keyof ElectionObserver, true>) as (keyof ElectionObserver)[];

/**
 * One {@link ElectionObserver} that passes every event to each of `observers`, in order; one
 * that throws does not keep the event from the others (the error is dropped, as the elector
 * drops an observer's errors). `flush()` awaits the `flush()` of every observer that has one.
 */
export function combineElectionObservers(
  ...observers: (ElectionObserver & Flushable)[]
): ElectionObserver & Required<Flushable> {
  return combine(METHODS, observers);
}

/** Every method of the shard observer, checked both ways (see {@link METHODS}). */
const SHARD_METHODS = Object.keys({
  shardStarted: true,
  shardStopped: true,
  shardDrained: true,
  shardHandedOff: true,
  shardGranted: true,
} satisfies Record<keyof ShardObserver, true>) as (keyof ShardObserver)[];

/**
 * One {@link ShardObserver} that passes every event to each of `observers`, in order, as
 * {@link combineElectionObservers} does for elections (metrics and Events of a sharded election).
 */
export function combineShardObservers(
  ...observers: (ShardObserver & Flushable)[]
): ShardObserver & Required<Flushable> {
  return combine(SHARD_METHODS, observers);
}

/** The observer of `methods` that calls each of `observers` in turn, and flushes them all. */
function combine<T extends object>(
  methods: readonly (keyof T)[],
  observers: (T & Flushable)[],
): T & Required<Flushable> {
  const combined = {
    flush: async () => {
      await Promise.all(observers.map((o) => o.flush?.()));
    },
  } as T & Required<Flushable>;
  for (const method of methods) {
    const targets = observers.filter((o) => typeof o[method] === 'function');
    if (targets.length === 0) continue;
    (combined as Record<keyof T, unknown>)[method] = (event: never) => {
      for (const target of targets) {
        try {
          (target[method] as (event: never) => void).call(target, event);
        } catch {
          // An observer never breaks an election, nor another observer.
        }
      }
    };
  }
  return combined;
}
