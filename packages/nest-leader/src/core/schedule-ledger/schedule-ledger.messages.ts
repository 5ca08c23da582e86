import { quoted } from '../../format.js';

/** Message texts of the schedule ledger: reading a stored ledger that is not ours, slot rules. */
export const scheduleLedgerMessages = {
  intervalPeriod: (periodMs: number): string =>
    `periodMs must be a whole number of milliseconds > 0, got ${periodMs}`,
  notJson: (): string => 'the stored schedule ledger is not JSON; reading it as empty',
  notAnObject: (): string =>
    'the stored schedule ledger is not a JSON object of jobs; reading it as empty',
  unknownVersion: (version: unknown): string =>
    `the stored schedule ledger has format version ${typeof version === 'number' ? version : typeof version}, this code reads 1; reading it as empty`,
  droppedEntries: (jobs: readonly string[]): string =>
    `the stored schedule ledger has ${jobs.length} malformed ${jobs.length === 1 ? 'entry' : 'entries'} ` +
    `(${jobs.slice(0, 3).map(quoted).join(', ')}${jobs.length > 3 ? ', …' : ''}: a bad slot, ` +
    'a token of a later term, a time far ahead, or a name too long); ignoring them',
  tooManyJobs: (jobs: number, maxJobs: number): string =>
    `the stored schedule ledger has ${jobs} jobs; reading the first ${maxJobs}`,
  tooLong: (length: number, maxLength: number): string =>
    `the stored schedule ledger is ${length} characters long, more than the ${maxLength} read; ` +
    'reading it as empty',
} as const;
