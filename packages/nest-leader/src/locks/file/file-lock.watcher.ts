/**
 * The watch behind `FileLock.watch`: `fs.watch` on the lease file's directory (inotify on Linux,
 * FSEvents/kqueue on macOS; the file itself is replaced by a rename on every write, so its
 * directory is what can be watched), which reports a renewal or a release the moment it is
 * renamed into place. A holder's death changes no file: while the holder's process can be
 * checked (same host and PID namespace, or macOS on the same boot, see `holder-process.ts`),
 * its liveness is re-checked
 * every {@link HOLDER_CHECK_INTERVAL_MS} from `/proc` — a local read, not a read of the lock —
 * and the record is reported again, with the holder `gone`, as soon as it is.
 */
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { HolderLiveness, VersionedLeaseRecord } from '../resource-lock.js';
import type { LockWatch, LockWatchListener } from '../watchable-lock.js';

/** How often a follower re-checks a live holder's process while watching, ms. */
export const HOLDER_CHECK_INTERVAL_MS = 250;
/** How long after a failed `fs.watch` (e.g. the directory is gone) it is tried again, ms. */
const RECONNECT_DELAY_MS = 1_000;

/** One read of the lease file for the watcher. */
export interface FileLockRead {
  /** The record as stored, with its holder's liveness; `undefined`: no file (or unparseable). */
  current: VersionedLeaseRecord | undefined;
  /**
   * Checks the holder's process of this read again (no file read); absent without a holder or
   * when the answer cannot change from here (another host, no proof).
   */
  recheckHolder?: () => HolderLiveness;
}

/** What the watcher needs from its `FileLock`. */
export interface FileLockWatchTarget {
  /** Absolute path of the lease file. */
  path: string;
  /** Reads the lease file. */
  read(): Promise<FileLockRead>;
}

/** Starts watching `target` until `signal` aborts; see the file's description. Never throws. */
export function watchFileLock(
  target: FileLockWatchTarget,
  listener: LockWatchListener,
  signal: AbortSignal,
): LockWatch {
  const fileName = basename(target.path);
  let watcher: FSWatcher | undefined;
  /** Counts connections: a read or event of an older one is ignored. */
  let generation = 0;
  let pending: Promise<void> | undefined;
  let readAgain = false;
  let latest: FileLockRead | undefined;
  /** version + holder state of what was last reported: the same record is not reported twice. */
  let reportedKey: string | undefined;
  let holderTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;

  const report = (current: VersionedLeaseRecord | undefined): void => {
    const key = current ? `${current.version} ${current.holderLiveness?.state ?? ''}` : '';
    if (key === reportedKey) return;
    reportedKey = key;
    listener.onRecord(current);
  };

  /** Reads the file (again, if a read is under way) and reports it; one read at a time. */
  const refresh = (): Promise<void> => {
    readAgain = true;
    pending ??= (async () => {
      try {
        while (readAgain && !signal.aborted) {
          readAgain = false;
          const connection = generation;
          let read: FileLockRead;
          try {
            read = await target.read();
          } catch (error) {
            if (!signal.aborted && connection === generation) disconnect(error);
            return;
          }
          if (signal.aborted || connection !== generation) continue;
          latest = read;
          report(read.current);
        }
      } finally {
        pending = undefined;
        scheduleHolderCheck();
      }
    })();
    return pending;
  };

  const scheduleHolderCheck = (): void => {
    clearTimeout(holderTimer);
    const recheck = latest?.recheckHolder;
    if (signal.aborted || !watcher || !recheck) return;
    const state = latest?.current?.holderLiveness?.state;
    if (state === undefined || state === 'gone') return;
    holderTimer = setTimeout(() => {
      if (recheck().state === state) scheduleHolderCheck();
      else void refresh();
    }, HOLDER_CHECK_INTERVAL_MS);
    holderTimer.unref();
  };

  const connect = (): void => {
    if (signal.aborted) return;
    const connection = ++generation;
    try {
      watcher = watch(dirname(target.path), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === fileName) void refresh();
      });
    } catch (error) {
      watcher = undefined;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return disconnect(error);
      return listener.onUnavailable(error); // e.g. ENOSPC: no inotify watches left
    }
    watcher.on('error', (error) => {
      if (connection === generation) disconnect(error);
    });
    // Read once after the watch is set up, so no change falls between the two.
    void refresh().then(() => {
      if (!signal.aborted && connection === generation && watcher) listener.onConnected();
    });
  };

  const close = (): void => {
    generation++;
    watcher?.close();
    watcher = undefined;
    clearTimeout(holderTimer);
    clearTimeout(retryTimer);
  };

  const disconnect = (error: unknown): void => {
    close();
    listener.onDisconnected(error);
    retryTimer = setTimeout(connect, RECONNECT_DELAY_MS);
    retryTimer.unref();
  };

  signal.addEventListener('abort', close, { once: true });
  connect();
  return {
    reconnect() {
      if (signal.aborted) return;
      close();
      listener.onDisconnected();
      reportedKey = undefined;
      connect();
    },
  };
}
