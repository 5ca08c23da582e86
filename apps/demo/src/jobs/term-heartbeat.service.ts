import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { type LeaderTerm, OnLeadershipAcquired } from 'nest-leader';
import type { DemoConfig } from '../demo.config.js';
import { DEMO_CONFIG } from '../demo.constants.js';
import { EventLog } from '../event-log.service.js';

/**
 * A term-bound loop, the pattern the library's README shows for long-running leader work: it
 * starts when a term begins and does one unit of work every `LEADER_HEARTBEAT_MS` until the
 * term it was given says it has ended. Each unit is a `heartbeat` leader-work line, so the
 * work log is fine-grained enough to time a failover (or catch an overlap) to the heartbeat.
 * Off unless `LEADER_HEARTBEAT_MS` is set.
 */
@Injectable()
export class TermHeartbeat {
  constructor(
    private readonly events: EventLog,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  @OnLeadershipAcquired()
  run(term: LeaderTerm): void {
    const periodMs = this.config.heartbeatMs;
    if (periodMs === undefined) return;
    void this.loop(term, periodMs);
  }

  private async loop(term: LeaderTerm, periodMs: number): Promise<void> {
    // term.isLive() re-checks the renew deadline at call time: after a pause (SIGSTOP, a
    // blocked event loop) it reads false before any timer of the elector has run.
    // The elector's own check is taken first, the term's second: time only moves on, so a
    // deadline that passes between the two stops the loop (no line), and `live: false` on a
    // line means the term admitted a unit the elector had already ended — a real disagreement,
    // never the two checks straddling the deadline (long run seed 3301, round 227).
    // The unit's time is taken before the checks that admit it: a pause between the checks and
    // the line (a SIGSTOP) must not stamp the line with the wake-up, after the term ended,
    // when the term was live at the checks (long run seed 3311, round 316).
    for (;;) {
      const at = new Date();
      const electorSaysLive = this.events.electorCountsLive(term);
      if (!term.isLive()) return;
      this.events.termWork('heartbeat', term, electorSaysLive, at);
      try {
        await sleep(periodMs, undefined, { signal: term.signal });
      } catch {
        return; // the term ended
      }
    }
  }
}
