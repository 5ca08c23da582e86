import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentTerm, LeaderOnly } from 'nest-leader';
import { DISPATCH_CRON, SIMULATED_DISPATCH_MS } from '../demo.constants.js';
import type { LeaderTask, LeaderWorkEvent } from '../demo-events.js';
import { EventLog } from '../event-log.service.js';

/** What one dispatch did. */
export interface DispatchResult extends LeaderWorkEvent {
  /** Jobs dispatched by this replica since it started. */
  dispatched: number;
}

/**
 * The singleton scheduler: dispatches the queued jobs every 2 seconds, on the leader only.
 * On followers the cron still ticks, and `@LeaderOnly()` skips the call. A new leader runs the
 * slots missed in a failover (`catchUp: 'all'`, see the schedule ledger), oldest first.
 */
@Injectable()
export class JobDispatcher {
  private dispatched = 0;

  constructor(private readonly events: EventLog) {}

  @LeaderOnly({ catchUp: 'all' })
  @Cron(DISPATCH_CRON, { name: 'dispatch-jobs', waitForCompletion: true })
  async dispatchScheduled(): Promise<void> {
    const term = currentTerm();
    try {
      await this.dispatch('dispatch-jobs');
    } catch (error) {
      // The term ended mid-dispatch and the work stopped with it, as it should: not an error
      // for the scheduler to log.
      if (term?.signal.aborted) return;
      throw error;
    }
  }

  /**
   * Dispatches the queued jobs. Must run inside a `@LeaderOnly()` invocation: the work is
   * bound to the term it started in and stops when that term ends.
   */
  async dispatch(task: LeaderTask): Promise<DispatchResult> {
    const line = this.events.leaderWork(task);
    // A real dispatcher would send `line.leaseTransitions` along as a fencing token, so the
    // queue can reject writes from a leader whose term has ended.
    await sleep(SIMULATED_DISPATCH_MS, undefined, { signal: currentTerm()?.signal });
    this.dispatched += 1;
    return { ...line, dispatched: this.dispatched };
  }
}
