import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type Observable, throwError } from 'rxjs';
import { NotLeaderException } from './not-leader.exception.js';

/**
 * Answers a {@link NotLeaderException} with 503, its JSON body and a `Retry-After` header
 * (which Nest's default filter cannot set). `@LeaderOnly()` attaches it to every method it
 * wraps; add it with `@UseFilters(NotLeaderExceptionFilter)` where you throw the exception
 * yourself. In a microservice context it replies with the body as the error payload.
 */
@Catch(NotLeaderException)
export class NotLeaderExceptionFilter implements ExceptionFilter<NotLeaderException> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: NotLeaderException, host: ArgumentsHost): Observable<never> | void {
    if (host.getType() === 'rpc') return throwError(() => exception.getResponse());
    const { httpAdapter } = this.adapterHost;
    const response: unknown = host.switchToHttp().getResponse();
    httpAdapter.setHeader(response, 'Retry-After', String(exception.retryAfterSeconds));
    httpAdapter.reply(response, exception.getResponse(), exception.getStatus());
  }
}
