import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import {
  EVENT_LISTENER_METADATA,
  LEADER_ONLY_METADATA,
  LEADER_ONLY_METHOD_METADATA,
  LEADERSHIP_EVENT_METADATA,
  MESSAGE_PATTERN_METADATA,
  SCHEDULE_METADATA,
} from '../leader.constants.js';
import type { LeadershipEventBinding } from '../leadership-events/leadership-events.interfaces.js';
import type {
  HandlerKind,
  LeaderOnlyMetadata,
  LeaderOnlyMethod,
} from './leader-only.interfaces.js';

/** Reads the Nest layer's metadata, and the route/pattern metadata it cares about, off a method. */
export const leaderMetadata = {
  /** The `@LeaderOnly()` options of a wrapped method, or `undefined` if it is not wrapped. */
  leaderOnly(method: unknown): LeaderOnlyMetadata | undefined {
    return isFunction(method) ? Reflect.getOwnMetadata(LEADER_ONLY_METADATA, method) : undefined;
  },

  /** What the gate runs of a wrapped method (one object per method), if it is wrapped. */
  gatedMethod(method: unknown): LeaderOnlyMethod | undefined {
    return isFunction(method)
      ? Reflect.getOwnMetadata(LEADER_ONLY_METHOD_METADATA, method)
      : undefined;
  },

  /** The leadership events (with their election) a method listens to (none for most methods). */
  leadershipEvents(method: unknown): readonly LeadershipEventBinding[] {
    return (isFunction(method) && Reflect.getOwnMetadata(LEADERSHIP_EVENT_METADATA, method)) || [];
  },

  /**
   * The decorator through which Nest calls `method` by itself, if any: a scheduled job, an
   * event listener or a message handler (what never runs, silently, on a class Nest never
   * created). Routes are left out: a missing route answers 404, which is not silent.
   */
  selfCalledBy(method: unknown): string | undefined {
    if (!isFunction(method)) return undefined;
    if (Reflect.hasOwnMetadata(SCHEDULE_METADATA.type, method)) return '@Cron/@Interval/@Timeout';
    if (Reflect.hasOwnMetadata(EVENT_LISTENER_METADATA, method)) return '@OnEvent';
    if (Reflect.hasOwnMetadata(MESSAGE_PATTERN_METADATA, method)) {
      return '@MessagePattern/@EventPattern';
    }
    return undefined;
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
