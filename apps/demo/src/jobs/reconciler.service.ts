import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { currentTerm, LeaderOnly } from 'nest-leader';
import { RECONCILE_INTERVAL_MS } from '../demo.constants.js';
import { EventLog } from '../event-log.service.js';

/** A control loop that must not run twice at once: compares desired and actual state every second. */
@Injectable()
export class Reconciler {
  constructor(private readonly events: EventLog) {}

  @Interval('reconcile', RECONCILE_INTERVAL_MS)
  @LeaderOnly()
  reconcile(): void {
    try {
      this.events.leaderWork('reconcile');
    } catch (error) {
      // The term ended between the tick's admission and the work (the process was paused
      // there): no work, as it should be — not an error to crash the interval's timer with.
      if (currentTerm()?.signal.aborted) return;
      throw error;
    }
  }
}
