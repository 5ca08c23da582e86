import { Logger } from '@nestjs/common';
import type { LeadershipEvent } from '../leader.constants.js';
import { nestMessages } from '../nest.messages.js';
import type {
  LeadershipEventHandler,
  LeadershipEventPayloads,
} from './leadership-events.interfaces.js';

/**
 * Calls the `@OnLeadershipAcquired`/`@OnLeadershipLost`/`@OnLeaderChanged` handlers of one
 * election that `LeaderExplorer` found. A handler's error (thrown or rejected) is logged and
 * never reaches the elector.
 */
export class LeadershipEventsDispatcher {
  private readonly logger = new Logger('LeaderElection');
  private readonly handlers = new Map<LeadershipEvent, LeadershipEventHandler[]>();

  add(event: LeadershipEvent, handler: LeadershipEventHandler): void {
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
