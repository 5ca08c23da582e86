import { Injectable, Logger } from '@nestjs/common';
import type { LeaderTerm } from './election/leader-elector.options.js';
import { LeadershipEvent } from './leader.constants.js';
import { nestMessages } from './messages.js';

/** What each leadership event hands its handlers. */
export interface LeadershipEventPayloads {
  [LeadershipEvent.Acquired]: LeaderTerm;
  [LeadershipEvent.Lost]: LeaderTerm;
  [LeadershipEvent.Changed]: string;
}

interface Handler {
  /** `Class.method`, for logs. */
  name: string;
  call(payload: unknown): unknown;
}

/**
 * Calls the `@OnLeadershipAcquired`/`@OnLeadershipLost`/`@OnLeaderChanged` handlers that
 * `LeaderExplorer` found. A handler's error (thrown or rejected) is logged and never reaches
 * the elector.
 */
@Injectable()
export class LeadershipEventsDispatcher {
  private readonly logger = new Logger('LeaderElection');
  private readonly handlers = new Map<LeadershipEvent, Handler[]>();

  add(event: LeadershipEvent, handler: Handler): void {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), handler]);
  }

  /** Calls every handler of `event` concurrently; resolves when all have settled. Never rejects. */
  async emit<E extends LeadershipEvent>(
    event: E,
    payload: LeadershipEventPayloads[E],
  ): Promise<void> {
    await Promise.all(
      (this.handlers.get(event) ?? []).map(async (handler) => {
        try {
          await handler.call(payload);
        } catch (error) {
          this.logger.error(
            nestMessages.handlerFailed(handler.name, event, error),
            errorStack(error),
          );
        }
      }),
    );
  }
}

function errorStack(error: unknown): string | undefined {
  return error instanceof Error ? error.stack : undefined;
}
