/** Metadata keys, names and defaults of the Nest layer. */

/**
 * Name of the election `LeaderModule.forRoot()` configures, and the election `@LeaderOnly()`,
 * the leadership event decorators, `currentTerm()` and `@InjectElection()` use when no name is
 * given (as @nestjs/typeorm's `'default'` data source). It is also the `name` the elector
 * reports to its `ElectionObserver`.
 */
export const DEFAULT_ELECTION_NAME = 'default';

/** Set on a `@LeaderOnly()` wrapper function; the value is its resolved `LeaderOnlyOptions`. */
export const LEADER_ONLY_METADATA = 'nest-leader:leader-only';

/**
 * Set on a `@LeaderOnly()` wrapper function; the value is its `LeaderOnlyMethod` (one per
 * method: what the gate runs, a late slot included).
 */
export const LEADER_ONLY_METHOD_METADATA = 'nest-leader:leader-only-method';

/** Set on a leadership event handler; the value is a `LeadershipEventBinding[]`. */
export const LEADERSHIP_EVENT_METADATA = 'nest-leader:leadership-event';

/** `@nestjs/microservices`' `PATTERN_METADATA`, spelled out so that package stays optional. */
export const MESSAGE_PATTERN_METADATA = 'microservices:pattern';

/** `@nestjs/event-emitter`'s `EVENT_LISTENER_METADATA` (`@OnEvent`), spelled out so that package stays optional. */
export const EVENT_LISTENER_METADATA = 'EVENT_LISTENER_METADATA';

/** Default bound, in milliseconds, on draining in-flight `@LeaderOnly` work at shutdown. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** The leadership events `@OnLeadershipAcquired`, `@OnLeadershipLost` and `@OnLeaderChanged` listen to. */
export enum LeadershipEvent {
  /** This replica became leader; handlers receive the new `LeaderTerm`. */
  Acquired = 'acquired',
  /** This replica's term ended; handlers receive the ended `LeaderTerm`. */
  Lost = 'lost',
  /** The observed holder changed (also to this replica); handlers receive its identity. */
  Changed = 'changed',
}

/**
 * `@nestjs/schedule`'s metadata keys and `SchedulerType` values, spelled out so that package
 * stays optional (read by the schedule ledger to learn a leader-only job's schedule).
 */
export const SCHEDULE_METADATA = {
  type: 'SCHEDULER_TYPE',
  name: 'SCHEDULER_NAME',
  cronOptions: 'SCHEDULE_CRON_OPTIONS',
  intervalOptions: 'SCHEDULE_INTERVAL_OPTIONS',
  cronType: 1,
  intervalType: 3,
} as const;
