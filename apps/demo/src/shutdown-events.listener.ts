import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { LeaderElectionService } from 'nest-leader';
import { EventLog } from './event-log.service.js';

const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Marks the start and the end of a graceful shutdown in the event log.
 *
 * Start: the first SIGTERM/SIGINT, seen by a listener registered before Nest's own (see
 * {@link ShutdownEventsListener.watchSignals}); Nest calls the library's shutdown hooks
 * module by module, deepest first, so an AppModule hook would run after the release.
 * End: `onApplicationShutdown`, which Nest calls after every `beforeApplicationShutdown`
 * hook (where the library drains leader-only work and releases the Lease) has finished, so
 * `replica-stopped` means released.
 */
@Injectable()
export class ShutdownEventsListener implements OnApplicationShutdown {
  constructor(
    private readonly leader: LeaderElectionService,
    private readonly events: EventLog,
  ) {}

  /** The signals `app.enableShutdownHooks()` should listen to. */
  static readonly signals: readonly string[] = SHUTDOWN_SIGNALS;

  /**
   * Writes `shutdown-started` on the first shutdown signal. Call before
   * `app.enableShutdownHooks()`. Both listeners go after the first signal, so the signal
   * Nest re-raises once it is done (and a second Ctrl-C) still ends the process.
   */
  watchSignals(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      for (const s of SHUTDOWN_SIGNALS) process.removeListener(s, onSignal);
      this.events.write({
        event: 'shutdown-started',
        identity: this.leader.identity,
        signal,
        at: new Date().toISOString(),
      });
    };
    for (const s of SHUTDOWN_SIGNALS) process.on(s, onSignal);
  }

  onApplicationShutdown(): void {
    this.events.write({
      event: 'replica-stopped',
      identity: this.leader.identity,
      at: new Date().toISOString(),
    });
  }
}
