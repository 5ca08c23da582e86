import { HttpException, HttpStatus } from '@nestjs/common';
import { nestMessages } from '../nest.messages.js';

/** The JSON body of a {@link NotLeaderException}. */
export interface NotLeaderResponseBody {
  statusCode: 503;
  error: 'Service Unavailable';
  message: string;
  /** Identity of the current leader, or `null` if none is known. */
  leader: string | null;
  /** Seconds after which a retry may succeed; also sent as the `Retry-After` header. */
  retryAfterSeconds: number;
}

/**
 * HTTP 503 Service Unavailable: this replica is not the leader. Thrown by `@LeaderOnly()`
 * route handlers on followers; `NotLeaderExceptionFilter` (attached to every `@LeaderOnly()`
 * method) adds the `Retry-After` header. Lives here rather than in `errors.ts` because it is
 * an `HttpException` and `errors.ts` stays framework-free.
 */
export class NotLeaderException extends HttpException {
  /**
   * @param leader - identity of the current leader, if known
   * @param retryAfterSeconds - whole seconds for the `Retry-After` header
   */
  constructor(
    readonly leader: string | undefined,
    readonly retryAfterSeconds: number,
  ) {
    const body: NotLeaderResponseBody = {
      statusCode: HttpStatus.SERVICE_UNAVAILABLE,
      error: 'Service Unavailable',
      message: nestMessages.notLeader(leader),
      leader: leader ?? null,
      retryAfterSeconds,
    };
    super(body, HttpStatus.SERVICE_UNAVAILABLE);
  }
}
