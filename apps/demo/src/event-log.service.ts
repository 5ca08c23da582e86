import { Inject, Injectable } from '@nestjs/common';
import {
  currentSlot,
  currentTerm,
  LeaderElectionService,
  type LeaderTerm,
  type ShardOwnershipEvent,
  type ShardTerm,
} from 'nest-leader';
import type { DemoConfig } from './demo.config.js';
import { DEMO_CONFIG, ORDER_SHARDS, SHARDED_ELECTION } from './demo.constants.js';
import type { OrderSharding } from './jobs/order-sharding.js';
import type { DemoEvent, LeaderTask, LeaderWorkEvent } from './demo-events.js';

/** Writes the demo's events to stdout, one JSON object per line. */
@Injectable()
export class EventLog {
  constructor(
    private readonly leader: LeaderElectionService,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  /**
   * Records one execution of leader-only work. Call it from inside a `@LeaderOnly()`
   * method: the line carries the term the invocation started under (its fencing token).
   * Its time is taken before the term's call-time check, as a unit of {@link termWork}: a
   * pause between the call's admission and the line (a container frozen there, pod chaos seed
   * 3341, round 23) ends here, and the work with it, instead of recording work stamped after
   * the term ended.
   * @throws LeaderTermEndedError when the term has ended (the work does not happen).
   */
  leaderWork(task: LeaderTask): LeaderWorkEvent {
    const at = new Date();
    const term = currentTerm();
    if (!term) throw new Error(`leader-work "${task}" recorded outside a @LeaderOnly() invocation`);
    term.throwIfEnded();
    const slot = currentSlot();
    const event: LeaderWorkEvent = {
      event: 'leader-work',
      task,
      identity: this.leader.identity,
      leaseTransitions: term.leaseTransitions,
      at: at.toISOString(),
      ...(slot && { slot: slot.scheduledAt.toISOString() }),
    };
    this.write(event);
    return event;
  }

  /** Records one run of the sharded reconciler for the shard of `term` (sharded `election`). */
  shardWork(election: string, term: ShardTerm): void {
    this.write({
      event: 'shard-work',
      election,
      shard: term.shard,
      token: term.token,
      memberEpoch: term.memberEpoch,
      identity: this.leader.identity,
      at: new Date().toISOString(),
    });
  }

  /** Records a shard term of sharded `election` starting or ending on this replica. */
  shardOwnership(election: string, change: ShardOwnershipEvent): void {
    const at = new Date().toISOString();
    this.write({
      event: 'shard-ownership',
      election,
      state: change.type,
      shard: change.term.shard,
      token: change.term.token,
      memberEpoch: change.term.memberEpoch,
      ...(change.type === 'stopped' && { reason: change.reason }),
      ...(change.type === 'started' && { live: change.term.isLive() }),
      identity: this.leader.identity,
      at,
    });
  }

  /**
   * Whether the elector counts `term` as its live term at this moment (its call-time check):
   * what a term-bound loop's work line records as `live` (see {@link termWork}).
   */
  electorCountsLive(term: LeaderTerm): boolean {
    return this.leader.isLeader() && this.leader.term === term;
  }

  /**
   * Records one unit of work of a term-bound loop (not a `@LeaderOnly()` invocation): the line
   * carries `term`'s fencing token and, as `live`, the elector's call-time check — `live` as
   * the loop took it ({@link electorCountsLive}) before the term's own check admitted the unit,
   * else taken now — and, as `at`, the time the loop took before those checks (else now).
   */
  termWork(
    task: LeaderTask,
    term: LeaderTerm,
    live = this.electorCountsLive(term),
    at = new Date(),
  ): LeaderWorkEvent {
    const event: LeaderWorkEvent = {
      event: 'leader-work',
      task,
      identity: this.leader.identity,
      leaseTransitions: term.leaseTransitions,
      at: at.toISOString(),
      live,
    };
    this.write(event);
    return event;
  }

  /**
   * Records that the replica listens on `port`; `sharding` says whether the sharded election
   * runs (with the file lock it does not, and a `sharding-off` line says why).
   */
  started(port: number, sharding: OrderSharding): void {
    this.write({
      event: 'replica-started',
      identity: this.leader.identity,
      pid: process.pid,
      port,
      leaseName: this.config.leaseName,
      lock: this.config.lock,
      shards: sharding.enabled ? ORDER_SHARDS : 0,
      at: new Date().toISOString(),
    });
    if (!sharding.enabled) {
      this.write({
        event: 'sharding-off',
        election: SHARDED_ELECTION,
        identity: this.leader.identity,
        reason: sharding.reason,
        at: new Date().toISOString(),
      });
    }
  }

  write(event: DemoEvent): void {
    // Synchronous for files and pipes on Linux: a line written is a line kept, even if the
    // process is killed right after.
    process.stdout.write(`${JSON.stringify(event)}\n`);
  }
}
