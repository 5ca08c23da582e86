/**
 * The texts of coordinated leader election's candidacy (`LeaseCandidateRegistration`): its
 * option rules.
 */

/** LeaseCandidates, as RBAC names them. */
export const LEASE_CANDIDATE_RESOURCE = 'leasecandidates.coordination.k8s.io';

export const candidacyMessages = {
  identityRule:
    'must be a LeaseCandidate name: 1–253 letters, digits, "-", "_" or "." (the API server ' +
    'requires a ConfigMap key)',
  versionRule: 'must be a strict semantic version such as 1.4.2 (no leading "v")',
  emulationAboveBinary: (binaryVersion: string) =>
    `must not be above binaryVersion (${binaryVersion}), as the API server requires`,
  strategyRule:
    'must be a non-empty coordinated leader election strategy, e.g. OldestEmulationVersion',
  intervalRule: 'must be a positive number of milliseconds',
} as const;
