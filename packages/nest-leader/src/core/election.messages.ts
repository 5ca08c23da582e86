/**
 * The texts of the core election: the elector's log lines, the reasons `health()` reports,
 * and the rules of its options (`leader-elector.options.ts`, `option-names.ts`).
 */

import type { LeaderTermEndReason } from '../errors.interfaces.js';
import { errorText, quoted, seconds } from '../format.js';

/** Log lines of the elector; `lock` is the lock's description, e.g. `Lease default/x`. */
export const electionMessages = {
  started: (identity: string, lock: string) =>
    `Candidate "${identity}" is campaigning for ${lock}.`,
  startedLeading: (identity: string, lock: string, leaseTransitions: number) =>
    `Candidate "${identity}" acquired ${lock} and started leading (term ${leaseTransitions}).`,
  stoppedLeading: (identity: string, lock: string, reason: LeaderTermEndReason) =>
    `Candidate "${identity}" stopped leading ${lock}: ${reason}.`,
  newLeader: (identity: string, lock: string) => `New leader of ${lock}: ${quoted(identity)}.`,
  lateAcquisition: (
    lock: string,
    leaseTransitions: number,
    elapsedMs: number,
    renewDeadlineMs: number,
  ) =>
    `${lock} was acquired (term ${leaseTransitions}), but the answer was handled ` +
    `${seconds(elapsedMs)} after the request was sent, past renewDeadline ` +
    `(${seconds(renewDeadlineMs)}; the process was paused or its event loop blocked): not ` +
    'leading on it; another candidate may already have taken over. Trying again.',
  renewDeadlineExceeded: (lock: string, renewDeadlineMs: number) =>
    `${lock} was not renewed within renewDeadline (${seconds(renewDeadlineMs)}); stepping down.`,
  takenOver: (lock: string, holder: string) =>
    `${lock} is now held by ${quoted(holder)}; stepping down.`,
  leaseDeleted: (lock: string) =>
    `${lock} was deleted while this candidate led it; stepping down at once.`,
  leaseMissing: (lock: string, holder: string, waitMs: number) =>
    `${lock} does not exist, but it was last seen held by ${holder ? quoted(holder) : '(nobody)'}: ` +
    `not creating it for another ${seconds(waitMs)} (leaseDuration since that record last ` +
    'changed and since the Lease was found missing), so a leader that has not noticed the ' +
    'deletion yet stops first.',
  yieldWithoutAdvertisements: (lock: string) =>
    `yieldToHigherPriority has no effect on ${lock}: it does not store candidates' ` +
    'advertisements, so this leader never sees a higher priority (use a LeaseLock).',
  transitionsWrapped: (lock: string, max: number) =>
    `${lock}: leaseTransitions reached ${max}, the largest value Lease.spec.leaseTransitions ` +
    '(an int32) holds; this term restarts it at 0. Fencing tokens restart: reset downstream ' +
    'systems that reject tokens not greater than the last one seen.',
  accessDeniedAfterSuccess: (operation: string, lock: string, graceMs: number) =>
    `${operation} of ${lock} was refused (HTTP 403) although these credentials worked ` +
    `before; the API server's authorization cache is probably still syncing after a restart. ` +
    `Retrying; reported as an RBAC problem if it lasts ${seconds(graceMs)}.`,
  unknownOption: (owner: string, closest: string | undefined) =>
    `is not an option of ${owner}` + (closest ? `; did you mean ${quoted(closest)}?` : ''),
  duplicateIdentity: (lock: string, identity: string) =>
    `${lock} was renewed by another process using the same identity "${identity}"; ` +
    'stepping down. Every candidate needs a unique identity (POD_NAME, or hostname-pid).',
  namesakeHolds: (lock: string, identity: string) =>
    `${lock} names this candidate's identity "${identity}" but was not written by it, and ` +
    'someone keeps renewing it: another process uses the same identity. Not taking it until ' +
    'it expires. Every candidate needs a unique identity (POD_NAME, or hostname-pid).',
  recampaign: (lock: string) => `Lost ${lock}; campaigning again with a new term.`,
  stoppedAfterLoss: (lock: string) => `Lost ${lock}; not campaigning again (onLost: 'stop').`,
  released: (identity: string, lock: string) =>
    `Candidate "${identity}" released ${lock} (holder cleared): a follower that watches it takes ` +
    'it as soon as it sees the change, one that polls at its next retry.',
  releaseSkipped: (lock: string, holder: string) =>
    `Not releasing ${lock}: it is held by ${holder ? quoted(holder) : '(nobody)'}.`,
  releaseFailed: (lock: string, error: unknown) =>
    `Could not release ${lock}; it expires after its leaseDuration instead: ${errorText(error)}`,
  scheduleLedgerFailed: (lock: string, error: unknown) =>
    `The schedule ledger writer for ${lock} threw; the stored ledger is kept: ${errorText(error)}`,
  callbackFailed: (callback: string, error: unknown) =>
    `Leader election callback ${callback} threw; ignored: ${errorText(error)}`,
  loopFailed: (lock: string, error: unknown) =>
    `Leader election loop for ${lock} failed unexpectedly; no longer campaigning: ${errorText(error)}`,
  lockOperationFailed: (operation: string, lock: string, error: unknown) =>
    `${operation} of ${lock} failed: ${errorText(error)}`,
  repeated: (message: string, count: number, sinceMs: number) =>
    `${message} (repeated ${count} times in the last ${seconds(sinceMs)})`,
  recovered: (lock: string, failures: number) =>
    `${lock} reachable again after ${failures} failed attempt(s).`,
  stoppedNotStartable: () => 'This LeaderElector was stopped; create a new one to campaign again.',
  watchUnavailable: (lock: string, error: unknown) =>
    `Cannot watch ${lock}, so followers poll it every retryPeriod instead (more API requests, ` +
    `slower handovers): ${errorText(error)}`,
  watchInterrupted: (lock: string, error: unknown) =>
    `Watch of ${lock} failed; polling until it reconnects: ${errorText(error)}`,
  watchSilent: (lock: string) =>
    `Watch of ${lock} missed a change; polling until it delivers again, and reconnecting it.`,
} as const;

/** Reasons `LeaderElector.health()` reports, as client-go's HealthzAdaptor. */
export const healthMessages = {
  leaseExpired: (
    lock: string,
    sinceRenewMs: number,
    leaseDurationMs: number,
    toleranceMs: number,
  ) =>
    `Believes it leads ${lock} but last renewed it ${seconds(sinceRenewMs)} ago ` +
    `(leaseDuration ${seconds(leaseDurationMs)} + tolerance ${seconds(toleranceMs)}).`,
  loopFailed: (lock: string, error: unknown) =>
    `The election loop for ${lock} stopped unexpectedly: ${errorText(error)}`,
  stoppedAfterLoss: (lock: string) =>
    `Lost ${lock} and stopped campaigning (onLost: 'stop'); restart to rejoin the election.`,
} as const;

/**
 * Rules of the elector's options, completing "Invalid leader election option "x": … (got y)."
 * (`leader-elector.options.ts`); numbers arrive formatted (at most 4 decimals).
 */
export const electionOptionRules = {
  positiveSeconds: 'must be a positive finite number of seconds',
  wholeLeaseDuration:
    'must be a whole number of seconds (Lease.spec.leaseDurationSeconds is an int32)',
  minRetryPeriod: (minSeconds: number) =>
    `must be at least ${minSeconds} seconds (at most 10 requests per second per candidate)`,
  renewDeadlineBelowLeaseDuration: (leaseDurationSeconds: string) =>
    `must be less than leaseDurationSeconds (${leaseDurationSeconds}), so a leader ` +
    'steps down before anyone else may take over',
  leaseDurationAboveRenewDeadline: (renewDeadlineSeconds: string) =>
    `must be greater than renewDeadlineSeconds (${renewDeadlineSeconds}), so a ` +
    'leader steps down before anyone else may take over',
  renewDeadlineAboveRetries: (jitterFactor: number, minRenewDeadlineSeconds: string) =>
    `must be greater than ${jitterFactor} × retryPeriodSeconds ` +
    `(${minRenewDeadlineSeconds}), so the leader can retry a renewal`,
  retryPeriodBelowRenewDeadline: (
    renewDeadlineSeconds: string,
    jitterFactor: number,
    maxRetryPeriodSeconds: string,
  ) =>
    `must be less than renewDeadlineSeconds (${renewDeadlineSeconds}) / ` +
    `${jitterFactor} = ${maxRetryPeriodSeconds}, so the leader ` +
    'can retry a renewal',
  identity: (maxLength: number) =>
    `must be a non-empty string of at most ${maxLength} characters, unique per process`,
  printableIdentity:
    'must be printable: no control characters (newlines, tabs, escapes), no invisible ' +
    'format characters',
  lock: 'must be a ResourceLock (LeaseLock, FileLock or MemoryLock)',
  name: 'must be a non-empty string',
  observer: 'must be an object implementing ElectionObserver',
  boolean: 'must be a boolean',
  onLost: "must be 'recampaign' or 'stop'",
  scheduleLedger: 'must be a function',
  podTemplateHash: (maxLength: number) =>
    `must be a label value: 1 to ${maxLength} letters, digits, '-', '_' or '.', starting and ` +
    "ending with a letter or digit (the pod's pod-template-hash label)",
  podCreationTimestamp: "must be a valid Date (the pod's metadata.creationTimestamp)",
  priority: 'must be a whole number from -2147483648 to 2147483647 (higher is preferred)',
  coordinated: (identity: string) =>
    `must be a candidacy (e.g. a LeaseCandidateRegistration) whose identity is this ` +
    `elector's ("${identity}")`,
} as const;
