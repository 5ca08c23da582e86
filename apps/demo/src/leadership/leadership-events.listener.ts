import { Injectable } from '@nestjs/common';
import {
  LeaderElectionService,
  type LeaderTerm,
  OnLeaderChanged,
  OnLeadershipAcquired,
  OnLeadershipLost,
} from 'nest-leader';
import { EventLog } from '../event-log.service.js';

/** Turns the library's leadership events into the demo's JSON lines. */
@Injectable()
export class LeadershipEventsListener {
  constructor(
    private readonly leader: LeaderElectionService,
    private readonly events: EventLog,
  ) {}

  @OnLeadershipAcquired()
  acquired(term: LeaderTerm): void {
    const at = new Date().toISOString();
    this.events.write({
      event: 'leadership-acquired',
      identity: this.leader.identity,
      leaseTransitions: term.leaseTransitions,
      live: term.isLive(),
      at,
    });
  }

  @OnLeadershipLost()
  lost(term: LeaderTerm): void {
    this.events.write({
      event: 'leadership-lost',
      identity: this.leader.identity,
      leaseTransitions: term.leaseTransitions,
      at: new Date().toISOString(),
    });
  }

  @OnLeaderChanged()
  changed(leader: string): void {
    this.events.write({
      event: 'leader-changed',
      identity: this.leader.identity,
      leader,
      at: new Date().toISOString(),
    });
  }
}
