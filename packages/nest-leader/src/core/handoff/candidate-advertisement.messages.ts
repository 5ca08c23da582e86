/**
 * Log lines of candidate advertisements and preferred handoffs (`candidate-advertisement.ts`,
 * the elector's handoff on stop). The message of `LeadershipTransferError` is in
 * `errors.messages.ts`, beside the other errors'.
 */

import { errorText, quoted, seconds } from '../../format.js';

/** Log lines; `lock` is the lock's description, e.g. `Lease default/x`. */
export const advertisementMessages = {
  advertised: (
    identity: string,
    lock: string,
    podTemplateHash: string | undefined,
    priority: number,
  ) =>
    `Candidate "${identity}" advertised itself on ${lock} (pod template ` +
    `${podTemplateHash === undefined ? '(unknown)' : quoted(podTemplateHash)}, priority ${priority}).`,
  advertiseFailed: (identity: string, lock: string, error: unknown) =>
    `Candidate "${identity}" could not advertise itself on ${lock}; leaders will not prefer it ` +
    `when handing off (the election is unaffected): ${errorText(error)}`,
  withdrawFailed: (identity: string, lock: string, error: unknown) =>
    `Candidate "${identity}" could not remove its advertisement from ${lock}; a leader may ` +
    'prefer it until a handoff to it fails (then others wait one handoff bound): ' +
    errorText(error),
  noPreferredCandidate: (identity: string, lock: string) =>
    `Candidate "${identity}" is stopping and no other candidate advertises itself on ${lock} ` +
    '(or none accepted its handoff offer): releasing it to whoever takes it first.',
  awaitingNewerTemplate: (identity: string, lock: string, own: string, waitMs: number) =>
    `Leader "${identity}" of ${lock} (pod template ${quoted(own)}) is stopping and no other ` +
    "candidate advertises itself (a rollout's new pods may still be starting): leading on " +
    `for at most ${seconds(waitMs)} until one does, then handing off.`,
  newerTemplateSeen: (identity: string, lock: string, to: string) =>
    `Leader "${identity}" of ${lock} sees ${quoted(to)} of a newer pod template: handing off.`,
  noNewerTemplate: (identity: string, lock: string, waitMs: number) =>
    `Leader "${identity}" of ${lock} saw no candidate of a newer pod template within ` +
    `${seconds(waitMs)}: handing off to the preferred one there is, or releasing.`,
  handoffOnStopFailed: (identity: string, lock: string, to: string, error: unknown) =>
    `Candidate "${identity}" could not hand ${lock} to ${quoted(to)} on stop; releasing it ` +
    `instead: ${errorText(error)}`,
};
