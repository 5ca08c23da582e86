/** Types of the leadership events feature. */
import type { LeaderTerm } from '../../core/leader-elector.options.js';
import type { LeadershipEvent } from '../leader.constants.js';

/** What each leadership event hands its handlers. */
export interface LeadershipEventPayloads {
  [LeadershipEvent.Acquired]: LeaderTerm;
  [LeadershipEvent.Lost]: LeaderTerm;
  [LeadershipEvent.Changed]: string;
}

/** One event a handler listens to, and of which election (stored on the handler method). */
export interface LeadershipEventBinding {
  readonly event: LeadershipEvent;
  readonly election: string;
}

/** A handler found by the explorer. */
export interface LeadershipEventHandler {
  /** `Class.method`, for logs. */
  readonly name: string;
  call(payload: unknown): unknown;
}
