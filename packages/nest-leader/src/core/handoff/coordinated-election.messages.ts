/**
 * Log lines of `spec.preferredHolder` and of coordinated leader election (the candidacy).
 */

import { errorText, quoted } from '../../format.js';

/** Log lines; `lock` is the lock's description, e.g. `Lease default/x`. */
export const coordinatedMessages = {
  preferredHolder: (identity: string, lock: string, preferred: string) =>
    `${lock} names ${quoted(preferred)} as its preferredHolder: candidate "${identity}" ends ` +
    'its term and hands the Lease over.',
  preferredHandoffFailed: (lock: string, preferred: string, error: unknown) =>
    `${lock}: handing the Lease to its preferredHolder ${quoted(preferred)} failed: ` +
    `${errorText(error)}`,
  registered: (candidacy: string) =>
    `${candidacy} registered: the coordinated election controller may pick this candidate.`,
  pingAnswered: (candidacy: string) => `${candidacy} answered the election controller's ping.`,
  candidacyFailed: (candidacy: string, operation: string, error: unknown) =>
    `${candidacy}: ${operation} failed: ${errorText(error)}` +
    (operation === 'create' && /\b404\b|not.?found/i.test(errorText(error))
      ? ' (is coordination.k8s.io/v1beta1 served? The API server needs ' +
        '--feature-gates=CoordinatedLeaderElection=true and ' +
        '--runtime-config=coordination.k8s.io/v1beta1=true)'
      : ''),
} as const;
