import { randomUUID } from 'node:crypto';
import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { FileLockMutexError } from '../../errors.js';
import { lockMessages } from '../lock.messages.js';

/** Options of {@link acquireFileMutex}. */
export interface FileMutexOptions {
  /** A mutex untouched for longer than this was left by a dead process and may be broken, ms. */
  staleMs: number;
  /** How long to wait for a busy mutex before failing, ms. */
  waitMs: number;
  signal?: AbortSignal;
}

/** A held {@link acquireFileMutex} mutex. */
export interface FileMutex {
  /**
   * Throws FileLockMutexError unless the mutex is certainly still ours: its directory is the one we created
   * (same inode) and less than half of `staleMs` has passed since, so nobody can have broken
   * it as stale. Call it right before committing.
   */
  assertHeld(): Promise<void>;
  /** Removes the mutex if it is still ours. Never throws. */
  release(): Promise<void>;
}

/**
 * A short cross-process mutex for one host: the directory `<path>.lock`, created with
 * `mkdir`, which exactly one process can do. A mutex older than `staleMs` (by its mtime) was
 * left by a process that died holding it: it is moved aside and taken.
 *
 * The scheme is proper-lockfile's, which FileLock used before. That library registers
 * process-wide signal handlers (signal-exit) when loaded; they swallow the SIGTERM Nest
 * re-raises after its shutdown hooks, so apps exited with status 0 instead of 143. A library
 * must not install signal handlers, so the few lines are ours. No exit hook is needed either:
 * a mutex is held for under `staleMs / 2`, and one left behind goes stale. Nothing follows a
 * symbolic link: `mkdir` does not, and the mutex is judged with `lstat`.
 *
 * @throws FileLockMutexError (`busy`) when the mutex stays busy for `waitMs`;
 *   the signal's reason when it aborts; file-system errors other than "exists".
 */
export async function acquireFileMutex(
  path: string,
  options: FileMutexOptions,
): Promise<FileMutex> {
  const directory = `${path}.lock`;
  const deadline = performance.now() + options.waitMs;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      await mkdir(directory, { mode: 0o700 });
      const acquiredAtMs = performance.now();
      const { ino } = await lstat(directory);
      return heldMutex(path, directory, ino, acquiredAtMs, options.staleMs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (await breakIfStale(directory, options.staleMs)) continue;
    if (performance.now() > deadline) {
      throw new FileLockMutexError(path, 'busy', lockMessages.fileLockBusy(path));
    }
    await delay(5 + Math.random() * 20, undefined, { signal: options.signal }).catch(
      () => undefined,
    );
  }
}

function heldMutex(
  path: string,
  directory: string,
  ino: number,
  acquiredAtMs: number,
  staleMs: number,
): FileMutex {
  const stillOurs = async (): Promise<boolean> => {
    const stats = await lstat(directory).catch(() => undefined);
    return stats?.isDirectory() === true && stats.ino === ino;
  };
  return {
    async assertHeld() {
      // Others break a mutex only once its mtime is staleMs old; within half of that since
      // acquiring (a monotonic clock), nobody can have broken it.
      if (performance.now() - acquiredAtMs >= staleMs / 2) {
        throw new FileLockMutexError(
          path,
          'held-too-long',
          lockMessages.fileLockHeldTooLong(path, staleMs / 2),
        );
      }
      if (!(await stillOurs())) {
        throw new FileLockMutexError(path, 'lost', lockMessages.fileMutexLost(path));
      }
    },
    async release() {
      if (await stillOurs()) await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Moves a stale mutex aside (atomically: one process wins the rename); true if it did. */
async function breakIfStale(directory: string, staleMs: number): Promise<boolean> {
  // lstat: a symbolic link planted at the mutex's name is judged (and moved aside) as itself.
  const stats = await lstat(directory).catch(() => undefined);
  if (!stats) return true; // released meanwhile: try again at once
  if (Date.now() - stats.mtimeMs <= staleMs) return false;
  const aside = `${directory}.stale-${randomUUID()}`;
  try {
    await rename(directory, aside);
  } catch {
    return true; // someone else broke it first
  }
  await rm(aside, { recursive: true, force: true });
  return true;
}
