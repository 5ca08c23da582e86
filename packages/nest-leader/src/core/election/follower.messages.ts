import { quoted } from '../../format.js';

/** The log lines of a follower judging a holder whose process the lock can check (FileLock). */
export const followerMessages = {
  holderGone: (lock: string, holder: string, proof: string) =>
    `The holder of ${lock}, ${quoted(holder)}, is gone (${proof}); taking it over now instead of ` +
    'waiting out its lease.',
  waitingForHolder: (lock: string, holder: string, until: Date, reason: string) =>
    `Waiting for ${quoted(holder)}, the holder of ${lock}: whether its process still runs cannot be ` +
    `checked from here (${reason}), so it leads until ${until.toISOString()} unless it renews ` +
    'or releases first.',
};
