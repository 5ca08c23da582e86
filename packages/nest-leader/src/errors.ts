/**
 * Every error class nest-leader throws or reports, in one place, so users can
 * `instanceof`-check them. Messages are built in `messages.ts`.
 *
 * Framework-free: imported by the core (`election/`, `locks/`) and the Nest layer.
 */

/** Base class of every error raised by nest-leader. */
export class LeaderElectionError extends Error {
  override name = 'LeaderElectionError';
}
