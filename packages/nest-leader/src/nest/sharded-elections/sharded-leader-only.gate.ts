/**
 * The `@LeaderOnly()` gate of a sharded election: a call runs the method once per shard this
 * member owns (in shard order, each inside its shard term: `currentShard(election)`), and the
 * shard's drain awaits the runs still in flight for it.
 */

import { Logger } from '@nestjs/common';
import { isThenable } from '../leader-only/in-flight.tracker.js';
import type {
  LeaderOnlyGateLike,
  LeaderOnlyMethod,
} from '../leader-only/leader-only.interfaces.js';
import { NotLeaderException } from '../leader-only/not-leader.exception.js';
import type { ShardedElection } from '../../sharding/sharded-election.js';
import type { ShardTerm } from '../../sharding/shard-term.js';
import { nestMessages } from '../nest.messages.js';
import { runInShard } from './shard-term.context.js';

/** See the file's description. @internal */
export class ShardedLeaderOnlyGate implements LeaderOnlyGateLike {
  private readonly logger = new Logger('LeaderOnly');
  /** Runs in flight per shard term. */
  private readonly inFlight = new Map<ShardTerm, Set<Promise<unknown>>>();
  private accepting = true;

  constructor(
    private readonly name: string,
    private readonly election: ShardedElection,
  ) {}

  /** Refuses new runs from now on (shutdown). */
  close(): void {
    this.accepting = false;
  }

  invoke(method: LeaderOnlyMethod, instance: object, args: unknown[]): unknown {
    const terms = this.accepting
      ? this.election
          .ownedShards()
          .map((shard) => this.election.shardTerm(shard))
          .filter((term): term is ShardTerm => term !== undefined)
      : [];
    if (terms.length === 0) return this.asFollower(method, instance, args);
    const pending: Promise<unknown>[] = [];
    for (const term of terms) {
      const result = runInShard(this.name, term, method.original, instance, args);
      if (isThenable(result)) pending.push(this.track(term, Promise.resolve(result)));
    }
    if (pending.length === 0) return method.isAsync ? Promise.resolve(undefined) : undefined;
    return Promise.all(pending).then(() => undefined);
  }

  /** Resolves once every run of `term` in flight has settled (its drain). */
  async drain(term: ShardTerm): Promise<void> {
    const runs = this.inFlight.get(term);
    if (runs) await Promise.allSettled([...runs]);
    this.inFlight.delete(term);
  }

  private track(term: ShardTerm, run: Promise<unknown>): Promise<unknown> {
    let runs = this.inFlight.get(term);
    if (!runs) this.inFlight.set(term, (runs = new Set()));
    runs.add(run);
    const done = (): void => {
      runs.delete(run);
    };
    run.then(done, done);
    return run;
  }

  private asFollower(method: LeaderOnlyMethod, instance: object, args: unknown[]): unknown {
    const behaviour =
      method.options.onFollower ??
      (method.kind === 'other' || method.kind === undefined ? 'skip' : 'throw');
    if (typeof behaviour === 'function') {
      return behaviour({
        instance,
        methodName: method.methodName,
        args,
        kind: method.kind ?? 'other',
        election: this.name,
        identity: this.election.identity,
        leader: undefined,
      });
    }
    if (behaviour === 'throw') {
      const error = new NotLeaderException(undefined, 1);
      if (method.isAsync) return Promise.reject(error);
      throw error;
    }
    if (Logger.isLevelEnabled('debug')) {
      this.logger.debug(
        nestMessages.skipped(instance.constructor.name, method.methodName, undefined),
      );
    }
    return method.isAsync ? Promise.resolve(undefined) : undefined;
  }
}
