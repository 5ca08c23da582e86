/** Log lines of handoff offers (`handoff-offer.session.ts`). */

import { errorText, quoted, seconds } from '../../format.js';

/** Log lines; `lock` is the lock's description, e.g. `Lease default/x`. */
export const offerMessages = {
  offered: (identity: string, lock: string, to: string, windowMs: number) =>
    `Leader "${identity}" offers ${lock} to ${quoted(to)} and leads on until it accepts ` +
    `(at most ${seconds(windowMs)}).`,
  accepted: (identity: string, lock: string, to: string, waitedMs: number) =>
    `Leader "${identity}": ${quoted(to)} accepted the handoff of ${lock} after ` +
    `${Math.round(waitedMs)} ms.`,
  unanswered: (identity: string, lock: string, to: string, windowMs: number) =>
    `Leader "${identity}": ${quoted(to)} did not accept the handoff of ${lock} within ` +
    `${seconds(windowMs)} (not running, or cannot write the Lease); its advertisement is ` +
    'removed and the Lease is not handed to it.',
  offerFailed: (identity: string, lock: string, to: string, error: unknown) =>
    `Leader "${identity}" could not offer ${lock} to ${quoted(to)}: ${errorText(error)}`,
  accepting: (identity: string, lock: string, from: string, leaseTransitions: number) =>
    `Candidate "${identity}" accepts the handoff of ${lock} offered by ${quoted(from)} ` +
    `(term ${leaseTransitions}).`,
  otherIncarnation: (identity: string, lock: string, offered: Date, ours: Date | undefined) =>
    `Candidate "${identity}" ignores the handoff offer on ${lock}: it names the incarnation ` +
    `started ${offered.toISOString()}, and this one started ` +
    `${ours ? ours.toISOString() : 'without an advertisement'} (a restarted container of the ` +
    'same pod); the leader will offer another candidate.',
  acceptFailed: (identity: string, lock: string, error: unknown) =>
    `Candidate "${identity}" could not accept the handoff offer on ${lock}: ${errorText(error)}`,
  readvertising: (identity: string, lock: string) =>
    `Candidate "${identity}" finds its advertisement gone from ${lock} (removed after an ` +
    'unanswered offer or a takeover) and adds it again.',
};
