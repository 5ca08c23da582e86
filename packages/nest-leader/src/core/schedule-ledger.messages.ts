/** Message texts of the schedule ledger: reading a stored ledger that is not ours, slot rules. */
export const scheduleLedgerMessages = {
  intervalPeriod: (periodMs: number): string =>
    `periodMs must be a whole number of milliseconds > 0, got ${periodMs}`,
  notJson: (): string => 'the stored schedule ledger is not JSON; reading it as empty',
  notAnObject: (): string =>
    'the stored schedule ledger is not a JSON object of jobs; reading it as empty',
  unknownVersion: (version: unknown): string =>
    `the stored schedule ledger has format version ${JSON.stringify(version) ?? 'undefined'}, this code reads 1; reading it as empty`,
  droppedEntries: (jobs: readonly string[]): string =>
    `the stored schedule ledger has malformed entries for ${jobs.map((j) => JSON.stringify(j)).join(', ')}; ignoring them`,
} as const;
