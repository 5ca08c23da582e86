/**
 * Log lines of a targeted handoff (`LeaderElector.transferLeadership`); the message of
 * `LeadershipTransferError` is in `errors.messages.ts`, beside the other errors'.
 */

import { errorText, quoted } from '../../format.js';

/** Log lines of a handoff; `lock` is the lock's description, e.g. `Lease default/x`. */
export const handoffMessages = {
  handedOff: (identity: string, lock: string, to: string, leaseDurationSeconds: number) =>
    `Candidate "${identity}" handed ${lock} to ${quoted(to)}: it may take it at once; any ` +
    `candidate may after ${leaseDurationSeconds} s if it does not.`,
  yieldingToPriority: (identity: string, lock: string, to: string, priority: number) =>
    `Candidate ${quoted(to)} of priority ${priority} advertises itself on ${lock}: the leader ` +
    `"${identity}" (yieldToHigherPriority) ends its term and hands the Lease over.`,
  yieldingToNewerTemplate: (
    identity: string,
    lock: string,
    to: string,
    podTemplateHash: string,
    settleSeconds: number,
  ) =>
    `Candidate ${quoted(to)} of the newer pod template ${quoted(podTemplateHash)} has stayed ` +
    `advertised on ${lock} for ${settleSeconds} s: the leader "${identity}" ` +
    `(yieldToNewerTemplate) ends its term and hands the Lease over.`,
  newerTemplateBackedOff: (
    identity: string,
    lock: string,
    backoff: { podTemplateHash: string; failures: number },
    remainingMs: number,
  ) =>
    `${lock}: a leader of the pod template ${quoted(backoff.podTemplateHash)} was lost without ` +
    `a handoff (${backoff.failures} in a row); the leader "${identity}" keeps the Lease and ` +
    `does not yield to that template for ${Math.ceil(remainingMs / 1000)} s more ` +
    `(yieldToNewerTemplate backoff). A crash-looping rollout? See \`kubectl rollout status\`.`,
  yieldFailed: (lock: string, to: string, error: unknown) =>
    `${lock}: handing the Lease to the higher-priority candidate ${quoted(to)} failed: ` +
    `${errorText(error)}`,
  newerTemplateYieldFailed: (lock: string, to: string, error: unknown) =>
    `${lock}: handing the Lease to the newer pod template's candidate ${quoted(to)} failed: ` +
    `${errorText(error)}`,
  accepting: (identity: string, lock: string, leaseTransitions: number) =>
    `${lock} was handed to this candidate "${identity}" (term ${leaseTransitions}); taking it now.`,
};

/** Rules of `transferLeadership`'s options, completing "leaseDurationSeconds … ". */
export const handoffRules = {
  wholeSeconds: 'must be a whole number of seconds, at least 1',
  atMostLeaseDuration: (leaseDurationSeconds: number) =>
    `must be at most the election's leaseDurationSeconds (${leaseDurationSeconds}): a handoff ` +
    'reserves the Lease for its target no longer than a crashed leader would hold it',
} as const;
