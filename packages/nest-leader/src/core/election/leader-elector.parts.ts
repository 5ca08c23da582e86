/**
 * The parts of one `LeaderElector` besides its algorithm — the lock's requests and their
 * failures, the record last seen, the followers' watch, handoffs, the advertisement, the stop
 * writes, the coordinated candidacy and the notifications — built from its resolved options
 * and wired to each other, so `leader-elector.ts` reads as the algorithm only. Framework-free.
 */

import type { LeaseRecord, VersionedLeaseRecord } from '../../locks/resource-lock.js';
import { isWatchableLock } from '../../locks/watchable-lock.js';
import { CandidateAdvertisement } from '../handoff/candidate-advertisement.js';
import { CandidacySession } from '../handoff/coordinated-election.js';
import { ElectionNotifier } from './election-notifier.js';
import { electionMessages } from '../election.messages.js';
import { HolderChecks } from './holder-checks.js';
import {
  MAX_LEASE_TRANSITIONS,
  type ResolvedLeaderElectorOptions,
} from '../leader-elector.options.js';
import type { HandoffWriter } from '../handoff/leadership-handoff.js';
import { LeadershipHandoffSession } from '../handoff/leadership-handoff.session.js';
import { HandoffOffers } from '../handoff/handoff-offer.session.js';
import { LockFailureReporter } from './lock-failure.reporter.js';
import { LockRequests } from './lock-requests.js';
import { LockWatchSession } from './lock-watch.session.js';
import { ObservedRecord, validTransitions } from './observed-record.js';
import {
  type ScheduleLedgerStamp,
  scheduleLedgerStamp,
} from '../schedule-ledger/schedule-ledger.stamp.js';
import { StopHandover } from '../handoff/stop-handover.js';

/** The parts of one elector (see the file's description). @internal */
export interface LeaderElectorParts {
  /** Callbacks, observer and leadership log lines. */
  notifier: ElectionNotifier;
  /** Classifies and logs failed lock requests (rate-limited; the 403 grace). */
  failures: LockFailureReporter;
  /** The lock, called with the per-request timeout and reported to the observer. */
  requests: LockRequests;
  /** The followers' watch of the lock (none without a watchable lock or with `watchLease: false`). */
  following: LockWatchSession;
  /** The last record seen and when it last changed (client-go's observedRecord/observedTime). */
  observed: ObservedRecord;
  /** A record as this elector writes it: with the `scheduleLedger` option's text. */
  withScheduleLedger: ScheduleLedgerStamp;
  /** Namesakes and holders proven gone: whether a Lease held by another must be waited for. */
  holders: HolderChecks;
  /**
   * Targeted handoffs: a transfer under way (offered first), recognising a Lease handed to us,
   * accepting an offer made to us.
   */
  handoffs: LeadershipHandoffSession;
  /** This candidate's advertisement in the record (`podTemplateHash`/`priority`), if any. */
  advertisement: CandidateAdvertisement | undefined;
  /** The writes on stop: handoff to the preferred candidate or release; the advertisement's removal. */
  stopWrites: StopHandover;
  /** The coordinated election's candidacy (does nothing without the `coordinated` option). */
  candidacy: CandidacySession;
  /** Remembers a record read or written ({@link ObservedRecord.observe}); reports a new holder. */
  observe(current: VersionedLeaseRecord): void;
  /** leaseTransitions + 1 for a new term, wrapping to 0 past the int32 maximum (logged). */
  nextTransitions(value: number): number;
}

/**
 * Builds the parts of an elector with these options.
 * @param endTerm - the elector's: ends the current term, if any, and awaits its drain
 * @internal
 */
export function assembleLeaderElector(
  config: ResolvedLeaderElectorOptions,
  endTerm: () => Promise<void>,
): LeaderElectorParts {
  const { lock, clock, logger } = config;
  const notifier = new ElectionNotifier(config);
  const failures = new LockFailureReporter(lock.description, logger, clock);
  const requests = new LockRequests(lock, clock, config.requestTimeoutMs, {
    succeeded: (operation) => failures.succeeded(operation),
    finished: (operation, outcome, durationMs) =>
      notifier.lockRequest(operation, outcome, durationMs),
  });
  const observed = new ObservedRecord(clock, config.leaseDurationMs);
  const observe = (current: VersionedLeaseRecord): void => {
    if (!observed.observe(current)) return;
    const { holderIdentity, leaseTransitions } = current.record;
    notifier.leaderChanged(holderIdentity, leaseTransitions);
  };
  const nextTransitions = (value: number): number => {
    const valid = validTransitions(value);
    if (valid < MAX_LEASE_TRANSITIONS) return valid + 1;
    logger.warn(electionMessages.transitionsWrapped(lock.description, valid));
    return 0;
  };
  const withScheduleLedger = scheduleLedgerStamp(config);
  const writer: HandoffWriter = {
    lock: lock.description,
    get: (signal) => requests.get(signal),
    update: (record: LeaseRecord, version: string, signal: AbortSignal) =>
      requests.update(record, version, signal),
    observe,
    now: () => clock.wallNow(),
    nextTransitions,
    finish: withScheduleLedger,
  };
  const offers = lock.storesCandidates === true ? new HandoffOffers(config, writer) : undefined;
  const handoffs = new LeadershipHandoffSession(
    config,
    { ...writer, endTerm, latest: () => observed.record },
    offers,
  );
  const entry = config.advertisement;
  const advertisement =
    entry && new CandidateAdvertisement(entry, writer, clock, config.retryPeriodMs, logger);
  const watchable = config.watchLease && isWatchableLock(lock) ? lock : undefined;
  return {
    notifier,
    failures,
    requests,
    following: new LockWatchSession(watchable, clock, logger, {
      onRecord: (current) => {
        if (current) observe(current);
      },
      wakes: (current) =>
        handoffs.handedToUs(current.record) || handoffs.offeredToUs(current.record),
    }),
    observed,
    withScheduleLedger,
    holders: new HolderChecks(config, observed),
    handoffs,
    advertisement,
    stopWrites: new StopHandover(config, writer, advertisement, offers),
    candidacy: new CandidacySession(config.coordinated, logger, clock),
    observe,
    nextTransitions,
  };
}
