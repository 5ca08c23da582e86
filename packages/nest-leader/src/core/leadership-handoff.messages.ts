/**
 * Log lines of a targeted handoff (`LeaderElector.transferLeadership`); the message of
 * `LeadershipTransferError` is in `errors.messages.ts`, beside the other errors'.
 */

import { quoted } from '../format.js';

/** Log lines of a handoff; `lock` is the lock's description, e.g. `Lease default/x`. */
export const handoffMessages = {
  handedOff: (identity: string, lock: string, to: string, leaseDurationSeconds: number) =>
    `Candidate "${identity}" handed ${lock} to ${quoted(to)}: it may take it at once; any ` +
    `candidate may after ${leaseDurationSeconds} s if it does not.`,
  accepting: (identity: string, lock: string, leaseTransitions: number) =>
    `${lock} was handed to this candidate "${identity}" (term ${leaseTransitions}); taking it now.`,
};
