/** Names and buckets of the leader election metrics (see the package's docs/observability.md for each one). */

/** Buckets of `leader_election_leadership_duration_seconds`: 1 s to a week. */
export const LEADERSHIP_DURATION_BUCKETS_SECONDS = [
  1,
  10,
  30,
  60,
  300,
  900,
  1800,
  3600,
  3 * 3600,
  6 * 3600,
  12 * 3600,
  86400,
  7 * 86400,
];
/** Buckets of `leader_election_lock_request_duration_seconds`: 5 ms to 10 s. */
export const LOCK_REQUEST_DURATION_BUCKETS_SECONDS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** The metric names, as exported. */
export const ELECTION_METRIC_NAMES = {
  masterStatus: 'leader_election_master_status',
  slowPath: 'leader_election_slowpath_total',
  transitions: 'leader_election_transitions_total',
  termsStarted: 'leader_election_terms_started_total',
  termsEnded: 'leader_election_terms_ended_total',
  leadershipDuration: 'leader_election_leadership_duration_seconds',
  lockRequestDuration: 'leader_election_lock_request_duration_seconds',
  lockErrors: 'leader_election_lock_errors_total',
  timeSinceLastRenew: 'leader_election_time_since_last_renew_seconds',
  observedLeader: 'leader_election_observed_leader_info',
  leaderOnlyCalls: 'leader_election_leader_only_calls_total',
  scheduleSlots: 'leader_election_schedule_slots_total',
} as const;
