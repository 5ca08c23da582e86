import { Logger } from '@nestjs/common';
import type { LeaderTerm } from '../election/leader-elector.options.js';
import { LeadershipLostDuringWorkError } from '../errors.js';
import { nestMessages } from '../messages.js';
import type { InFlightTracker } from './in-flight.tracker.js';
import { runInTerm } from './leader-term.context.js';
import type {
  FollowerContext,
  GatedElection,
  LeaderOnlyCallCounter,
  LeaderOnlyCallCounts,
  LeaderOnlyGateLike,
  LeaderOnlyInvocation,
  LeaderOnlySite,
} from './leader-only.interfaces.js';
import { NotLeaderException } from './not-leader.exception.js';
import { importMicroservices } from '../optional-peers.js';

/**
 * Decides each `@LeaderOnly()` call of one election: on its leader (and before shutdown began)
 * it runs the method inside the election's term and tracks it until it settles; on a follower
 * it applies the method's follower behaviour.
 */
export class LeaderOnlyGate implements LeaderOnlyGateLike {
  private readonly logger = new Logger('LeaderOnly');
  /** Per decorated method, the counts `counter` gave for it (only with a counter). */
  private readonly counts = new WeakMap<LeaderOnlySite, LeaderOnlyCallCounts>();
  /**
   * Methods whose skip was logged since this replica last led: each is logged once, not on
   * every tick of its job (Nest 12 logs debug by default).
   */
  private readonly skipsLogged = new Set<string>();

  /**
   * @param counter - counts each call's outcome per handler (the metrics'
   *   `leader_election_leader_only_calls_total`); none: nothing is counted.
   */
  constructor(
    private readonly election: GatedElection,
    private readonly inFlight: InFlightTracker,
    private readonly counter?: LeaderOnlyCallCounter,
  ) {}

  invoke(invocation: LeaderOnlyInvocation): unknown {
    // `term` re-checks the renew deadline at call time (undefined once it passed).
    const term = this.election.term;
    const counts = this.counter && this.countsOf(invocation.site);
    if (term && this.inFlight.accepting) {
      if (invocation.options.verify) return this.verified(invocation, term, counts);
      if (counts) counts.ran++;
      if (this.skipsLogged.size > 0) this.skipsLogged.clear();
      return this.inFlight.track(() => runInTerm(this.election.name, term, () => invocation.run()));
    }
    return this.asFollower(invocation, counts);
  }

  private countsOf(site: LeaderOnlySite): LeaderOnlyCallCounts {
    let counts = this.counts.get(site);
    if (!counts) {
      counts = this.counter!(site.handler);
      this.counts.set(site, counts);
    }
    return counts;
  }

  /**
   * Fenced work: one GET of the Lease before the call (failed → a follower call) and, for
   * `'before-and-after'`, one after it (failed → `LeadershipLostDuringWorkError`, result
   * withheld). Tracked as in-flight from the first verification to the last.
   */
  private verified(
    invocation: LeaderOnlyInvocation,
    term: LeaderTerm,
    counts: LeaderOnlyCallCounts | undefined,
  ): Promise<unknown> {
    return this.inFlight.track(async () => {
      if (!(await this.election.verifyTerm(term))) {
        return this.asFollower({ ...invocation, isAsync: true }, counts);
      }
      if (counts) counts.ran++;
      const result = await runInTerm(this.election.name, term, () => invocation.run());
      if (invocation.options.verify === 'before-and-after') {
        // A graceful shutdown ends the term but keeps the Lease while work drains: still ours.
        if (!(await this.election.verifyTerm(term, { whileDraining: true }))) {
          throw new LeadershipLostDuringWorkError(
            this.election.name,
            term.leaseTransitions,
            invocation.instance.constructor?.name,
            invocation.methodName,
          );
        }
      }
      return result;
    }) as Promise<unknown>;
  }

  private asFollower(
    invocation: LeaderOnlyInvocation,
    counts: LeaderOnlyCallCounts | undefined,
  ): unknown {
    const { instance, methodName, args, kind, isAsync, options } = invocation;
    const context: FollowerContext = {
      instance,
      methodName,
      args,
      kind,
      election: this.election.name,
      identity: this.election.identity,
      leader: this.election.leader,
    };
    const behaviour = options.onFollower ?? (kind === 'other' ? 'skip' : 'throw');
    if (behaviour !== 'throw' && counts) counts.skipped++;
    if (typeof behaviour === 'function') return behaviour(context);
    if (behaviour === 'skip') {
      // Skips can be frequent (every tick of every job on every follower): build no message
      // unless debug logging is on.
      if (Logger.isLevelEnabled('debug')) {
        const handler = `${instance.constructor.name}.${methodName}`;
        if (!this.skipsLogged.has(handler)) {
          this.skipsLogged.add(handler);
          this.logger.debug(
            nestMessages.skipped(instance.constructor.name, methodName, context.leader),
          );
        }
      }
      return isAsync ? Promise.resolve(undefined) : undefined;
    }
    if (counts) counts.rejected++;
    const retryAfterSeconds = Math.max(1, Math.ceil(this.election.timings.retryPeriodSeconds));
    if (kind === 'rpc') return rejectWithRpcException(context.leader, retryAfterSeconds);
    const error = new NotLeaderException(context.leader, retryAfterSeconds);
    if (isAsync) return Promise.reject(error);
    throw error;
  }
}

/**
 * Rejects with an `RpcException`, which Nest's RPC layer sends back as the error reply.
 * Imported lazily so `@nestjs/microservices` is only needed by applications that use it.
 */
async function rejectWithRpcException(
  leader: string | undefined,
  retryAfterSeconds: number,
): Promise<never> {
  const { RpcException } = await importMicroservices();
  throw new RpcException({
    status: 'error',
    message: nestMessages.notLeader(leader),
    leader: leader ?? null,
    retryAfterSeconds,
  });
}
