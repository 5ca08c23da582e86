/**
 * The schedule-ledger hook of the elector: stamps every record it writes (acquisition,
 * renewal, release, handoff) with the ledger text of the `scheduleLedger` option. Framework-free.
 */

import type { LeaseRecord } from '../../locks/resource-lock.js';
import { electionMessages } from '../election.messages.js';
import type { ResolvedLeaderElectorOptions } from '../leader-elector.options.js';

/** A record as the elector writes it: with the ledger text the writer returns. @internal */
export type ScheduleLedgerStamp = (record: LeaseRecord) => LeaseRecord;

/**
 * The stamp for the `scheduleLedger` writer (see `LeaderElectorOptions.scheduleLedger`):
 * `record` with the text the writer returns for the stored text and the record's
 * `leaseTransitions`; unchanged without a writer, when it returns `undefined`, or when it
 * throws (logged as a warning naming the lock).
 * @internal
 */
export function scheduleLedgerStamp(
  config: Pick<ResolvedLeaderElectorOptions, 'scheduleLedger' | 'logger' | 'lock'>,
): ScheduleLedgerStamp {
  const { scheduleLedger: writer, logger, lock } = config;
  return (record) => {
    if (writer === undefined) return record;
    let text: string | undefined;
    try {
      text = writer(record.scheduleLedger, record.leaseTransitions);
    } catch (error) {
      logger.warn(electionMessages.scheduleLedgerFailed(lock.description, error));
      return record;
    }
    return text === undefined ? record : { ...record, scheduleLedger: text };
  };
}
