import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import type { LeaderOnlyOptions } from './decorators/leader-only.decorator.js';
import {
  LEADER_ONLY_METADATA,
  LEADERSHIP_EVENT_METADATA,
  type LeadershipEvent,
  MESSAGE_PATTERN_METADATA,
} from './leader.constants.js';

/**
 * What a `@LeaderOnly()` method is to Nest, which decides its default follower behaviour:
 * `http` — a controller route handler (`@Get`, `@Post`…); `rpc` — a microservice message or
 * event handler (`@MessagePattern`, `@EventPattern`); `other` — anything else (scheduled
 * jobs, event listeners, plain calls).
 */
export type HandlerKind = 'http' | 'rpc' | 'other';

/** Reads the Nest layer's metadata, and the route/pattern metadata it cares about, off a method. */
export const leaderMetadata = {
  /** The `@LeaderOnly()` options of a wrapped method, or `undefined` if it is not wrapped. */
  leaderOnly(method: unknown): LeaderOnlyOptions | undefined {
    return isFunction(method) ? Reflect.getOwnMetadata(LEADER_ONLY_METADATA, method) : undefined;
  },

  /** The leadership events a method listens to (none for most methods). */
  leadershipEvents(method: unknown): readonly LeadershipEvent[] {
    return (isFunction(method) && Reflect.getOwnMetadata(LEADERSHIP_EVENT_METADATA, method)) || [];
  },

  handlerKind(method: object): HandlerKind {
    if (Reflect.hasOwnMetadata(MESSAGE_PATTERN_METADATA, method)) return 'rpc';
    const isRoute =
      Reflect.hasOwnMetadata(PATH_METADATA, method) &&
      Reflect.hasOwnMetadata(METHOD_METADATA, method);
    return isRoute ? 'http' : 'other';
  },
};

function isFunction(value: unknown): value is object {
  return typeof value === 'function';
}
