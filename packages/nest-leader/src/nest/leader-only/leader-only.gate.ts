import { Logger } from '@nestjs/common';
import type { LeaderTerm } from '../../core/leader-elector.options.js';
import { LeadershipLostDuringWorkError } from '../../errors.js';
import { nestMessages } from '../nest.messages.js';
import type { InFlightTracker } from './in-flight.tracker.js';
import { runInTerm } from './leader-term.context.js';
import type {
  FollowerContext,
  GatedElection,
  LeaderOnlyCallCounter,
  LeaderOnlyCallCounts,
  LeaderOnlyGateLike,
  LeaderOnlyMethod,
  LeaderOnlySite,
} from './leader-only.interfaces.js';
import { isThenable } from './in-flight.tracker.js';
import { NotLeaderException } from './not-leader.exception.js';
import type {
  LateSlotRun,
  LateSlotRunner,
  ScheduleLedgerKeeper,
  SlotRun,
} from '../schedule/schedule-ledger.keeper.js';
import { importMicroservices } from '../../peers/optional-peers.js';

/**
 * Decides each `@LeaderOnly()` call of one election: on its leader (and before shutdown began)
 * it runs the method inside the election's term and tracks it until it settles; on a follower
 * it applies the method's follower behaviour. The schedule ledger's late slots come in through
 * {@link runLateSlot} and are decided alike.
 */
export class LeaderOnlyGate implements LeaderOnlyGateLike, LateSlotRunner {
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
   * @param schedule - the election's schedule ledger: recurring jobs run their slots through it
   */
  constructor(
    private readonly election: GatedElection,
    private readonly inFlight: InFlightTracker,
    private readonly counter?: LeaderOnlyCallCounter,
    private readonly schedule?: Pick<ScheduleLedgerKeeper, 'beginSlot'>,
  ) {}

  invoke(method: LeaderOnlyMethod, instance: object, args: unknown[]): unknown {
    // `term` re-checks the renew deadline at call time (undefined once it passed).
    const term = this.election.term;
    if (term !== undefined && this.inFlight.accepting) {
      if (method.options.verify) return this.verified(method, instance, args, term);
      const slotRun = this.schedule?.beginSlot(method.site, term);
      if (slotRun === 'duplicate') return method.isAsync ? Promise.resolve(undefined) : undefined;
      if (this.counter) this.countsOf(method.site).ran++;
      if (this.skipsLogged.size > 0) this.skipsLogged.clear();
      if (slotRun === undefined) {
        const result = runInTerm(this.election.name, term, method.original, instance, args);
        // Only promises (thenables) are tracked: a synchronous method has returned by now.
        if (isThenable(result)) this.inFlight.trackSettling(result);
        return result;
      }
      return this.runSlot(method, instance, args, term, slotRun);
    }
    return this.asFollower(method, instance, args);
  }

  /** See {@link LateSlotRunner.runLateSlot}: as {@link invoke}, with the slot given. */
  runLateSlot(method: LeaderOnlyMethod, instance: object, late: LateSlotRun): unknown {
    const term = this.election.term;
    if (term === undefined || !this.inFlight.accepting) {
      return this.asFollower(method, instance, []);
    }
    if (method.options.verify) return this.verified(method, instance, [], term, late);
    if (this.counter) this.countsOf(method.site).ran++;
    if (this.skipsLogged.size > 0) this.skipsLogged.clear();
    late.begin();
    return this.runSlot(method, instance, [], term, late);
  }

  /**
   * Runs one slot of a recurring job, and settles it in the ledger when the run ends — unless
   * it threw or rejected after its term ended (work stopped by `currentTerm().signal`): that
   * slot stays unfinished, and the next leader redoes it.
   */
  private runSlot(
    method: LeaderOnlyMethod,
    instance: object,
    args: unknown[],
    term: LeaderTerm,
    slotRun: SlotRun,
  ): unknown {
    const failed = (): void => {
      if (!term.signal.aborted) slotRun.settle();
    };
    let result: unknown;
    try {
      result = runInTerm(this.election.name, term, method.original, instance, args, slotRun.slot);
    } catch (error) {
      failed();
      throw error;
    }
    if (!isThenable(result)) {
      slotRun.settle();
      return result;
    }
    this.inFlight.trackSettling(Promise.resolve(result).then(() => slotRun.settle(), failed));
    return result;
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
    method: LeaderOnlyMethod,
    instance: object,
    args: unknown[],
    term: LeaderTerm,
    late?: LateSlotRun,
  ): Promise<unknown> {
    return this.inFlight.track(async () => {
      if (!(await this.election.verifyTerm(term))) {
        return this.asFollower(method, instance, args, true);
      }
      late?.begin();
      const slotRun = late ?? this.schedule?.beginSlot(method.site, term);
      if (slotRun === 'duplicate') return undefined;
      if (this.counter) this.countsOf(method.site).ran++;
      const result = await (slotRun === undefined
        ? runInTerm(this.election.name, term, method.original, instance, args)
        : this.runSlot(method, instance, args, term, slotRun));
      if (method.options.verify === 'before-and-after') {
        // A graceful shutdown ends the term but keeps the Lease while work drains: still ours.
        if (!(await this.election.verifyTerm(term, { whileDraining: true }))) {
          throw new LeadershipLostDuringWorkError(
            this.election.name,
            term.leaseTransitions,
            instance.constructor?.name,
            method.methodName,
          );
        }
      }
      return result;
    });
  }

  /** @param isAsync - whether to answer with a promise (default: as the method is declared) */
  private asFollower(
    method: LeaderOnlyMethod,
    instance: object,
    args: unknown[],
    isAsync: boolean = method.isAsync,
  ): unknown {
    const { methodName, options } = method;
    const kind = method.kind ?? 'other';
    const counts = this.counter && this.countsOf(method.site);
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
