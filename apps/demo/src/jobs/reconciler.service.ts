import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { LeaderOnly } from 'nest-leader';
import { RECONCILE_INTERVAL_MS } from '../demo.constants.js';
import { EventLog } from '../event-log.service.js';

/** A control loop that must not run twice at once: compares desired and actual state every second. */
@Injectable()
export class Reconciler {
  constructor(private readonly events: EventLog) {}

  @Interval('reconcile', RECONCILE_INTERVAL_MS)
  @LeaderOnly()
  reconcile(): void {
    this.events.leaderWork('reconcile');
  }
}
