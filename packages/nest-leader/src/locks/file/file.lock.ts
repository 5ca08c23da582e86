import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  FileLockUnsafePathError,
  InvalidLeaderElectionOptionError,
  LockConflictError,
} from '../../errors.js';
import {
  defaultFileLockDirectory,
  ensureFileLockDirectory,
  projectRoot,
  userFileLockDirectory,
} from './file-lock-directory.js';
import { acquireFileMutex } from './file-mutex.js';
import { lockMessages } from '../lock.messages.js';
import { type FileLockRead, watchFileLock } from './file-lock.watcher.js';
import {
  checkHolderProcess,
  type HolderProcess,
  isCheckableHere,
  thisHolderProcess,
} from './holder-process.js';
import { validateLeaseName } from '../../kubernetes/names.js';
import { type LeaseRecord, parseLeaseRecord, type VersionedLeaseRecord } from '../resource-lock.js';
import type { LockWatch, LockWatchListener, WatchableLock } from '../watchable-lock.js';

/** Options of {@link FileLock}: an explicit file, or a name in a directory. */
export type FileLockOptions =
  | {
      /** Path of the lease file; its directory is created if missing. */
      path: string;
    }
  | {
      /** Lease name (DNS-1123 subdomain); the file is `<directory>/<name>.lease.json`. */
      name: string;
      /**
       * Directory of the lease file; default one per project in this user's directory,
       * `$XDG_RUNTIME_DIR/nest-leader/<project>-<hash>` or
       * `<os.tmpdir()>/nest-leader-<uid>/<project>-<hash>` (see `defaultFileLockDirectory`).
       */
      directory?: string;
    };

/** How long a write waits for the file mutex before failing (the elector retries). */
const MUTEX_WAIT_MS = 5_000;
/** A mutex older than this is stale (its holder died mid-write). */
const MUTEX_STALE_MS = 2_000;
/**
 * Longest lease file read, in bytes: a record with a schedule ledger and a handoff marker is a
 * few KB; a larger file is not one we wrote and reads as no record (as unparseable content).
 */
export const MAX_LEASE_FILE_BYTES = 1024 * 1024;
/** `open` flags of a lease file read: never through a symbolic link, never blocking on a FIFO. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

interface LeaseFile {
  version: string;
  record: {
    holderIdentity: string;
    leaseDurationSeconds: number;
    leaseTransitions: number;
    acquireTime?: string;
    renewTime?: string;
    strategy?: string;
    preferredHolder?: string;
    scheduleLedger?: string;
    handoff?: { to: string; leaseTransitions: number };
  };
  /** Proof of the process that wrote a record naming a holder: the holder itself. */
  holderProcess?: HolderProcess;
}

/**
 * The election record as a JSON file, for several processes on ONE host (local
 * development, a VM, `docker compose` with a shared volume on one machine). Not for network
 * file systems or several hosts: use `LeaseLock` there.
 *
 * Compare-and-swap: `create`/`update` hold a short mutex (the directory `<file>.lock`, see
 * `acquireFileMutex`; one left by a process killed mid-write goes stale after 2 s), re-read the
 * version stored in the file, and write a temporary file then rename it over the lease
 * file, so readers never see a partial record. Versions are random tokens, so a deleted
 * and re-created file never matches an old version.
 *
 * Holder's process: a write naming a holder also stores proof of the writing process (the
 * holder: hostname, boot id, PID namespace, PID and the PID's start time, see
 * `holder-process.ts`). {@link get} reports, as `holderLiveness`, whether the OS proves that
 * process alive or gone from here; the elector takes a record whose holder is `gone` at once
 * instead of waiting out its lease. From another host or PID namespace, or on an OS without
 * `/proc`, liveness is `unknown` and only the lease's expiry counts.
 *
 * {@link watch} reports every write the moment it is renamed into place (`fs.watch` on the
 * directory), and a watched holder's death within 250 ms (`HOLDER_CHECK_INTERVAL_MS`).
 *
 * Another user of the host is hostile: before every read and write the lock's directory is
 * created (0700) if missing and checked to be this user's own (`ensureFileLockDirectory`:
 * not a symbolic link, owned by this uid, not writable by group or others; for the default
 * directory, its per-user parent too); the lease file is opened without following symbolic
 * links, must be a regular file, and is read up to 1 MiB (`MAX_LEASE_FILE_BYTES`).
 */
export class FileLock implements WatchableLock {
  /** `FileLock <path>`. */
  readonly description: string;
  /** Absolute path of the lease file. */
  readonly path: string;
  /** The directories checked before each access, outermost first, and whether to create parents. */
  private readonly directories: ReadonlyArray<{ path: string; parents: boolean }>;

  /**
   * @throws InvalidLeaderElectionOptionError if `path` is empty or `name` is not a DNS-1123
   *   subdomain.
   */
  constructor(opts: FileLockOptions) {
    if ('path' in opts) {
      if (typeof opts.path !== 'string' || opts.path.trim() === '') {
        throw new InvalidLeaderElectionOptionError('path', lockMessages.filePathRule, opts.path);
      }
      this.path = resolve(opts.path);
      this.directories = [{ path: dirname(this.path), parents: true }];
    } else {
      const name = validateLeaseName(opts.name, 'name');
      if (opts.directory === undefined) {
        const user = resolve(userFileLockDirectory());
        const project = defaultFileLockDirectory(projectRoot(), user);
        this.path = resolve(project, `${name}.lease.json`);
        this.directories = [
          { path: user, parents: true },
          { path: project, parents: false },
        ];
      } else {
        this.path = resolve(opts.directory, `${name}.lease.json`);
        this.directories = [{ path: dirname(this.path), parents: true }];
      }
    }
    this.description = `FileLock ${this.path}`;
  }

  /**
   * Reads the file without the mutex (writes are atomic renames); `undefined` if absent or
   * unparseable. A record naming a holder comes with `holderLiveness` (see the class).
   */
  async get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    signal?.throwIfAborted();
    return (await this.readWithHolder()).current;
  }

  /**
   * Watches the file until `signal` aborts (see `file-lock.watcher.ts`): every write is
   * reported as it lands, and a holder whose process can be checked is re-checked every 250 ms,
   * reported again once it is gone. Never throws.
   */
  watch(listener: LockWatchListener, signal: AbortSignal): LockWatch {
    return watchFileLock({ path: this.path, read: () => this.readWithHolder() }, listener, signal);
  }

  /**
   * Writes the file if it holds no record; resolves the new version.
   * @throws LockConflictError if it does; FileLockMutexError if the mutex stays busy for 5 s.
   */
  async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    return this.withMutex(signal, async (assertHeld) => {
      if (await this.read()) throw new LockConflictError(this.description, 'create');
      return this.write(record, assertHeld);
    });
  }

  /**
   * Replaces the record if the file is still at `version`; resolves the new version.
   * @throws LockConflictError if it changed; FileLockMutexError if the mutex stays busy for 5 s.
   */
  async update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    return this.withMutex(signal, async (assertHeld) => {
      const current = await this.read();
      if (current?.version !== version) throw new LockConflictError(this.description, 'update');
      return this.write(record, assertHeld);
    });
  }

  /** Reads the file; missing or unparseable content reads as no record. */
  private async read(): Promise<VersionedLeaseRecord | undefined> {
    return fromLeaseFile(await this.readFile());
  }

  /** {@link read}, with the holder's liveness checked (and a way to check it again). */
  private async readWithHolder(): Promise<FileLockRead> {
    const file = await this.readFile();
    const current = fromLeaseFile(file);
    if (!current || current.record.holderIdentity === '') return { current };
    const holder = file?.holderProcess;
    const holderLiveness = checkHolderProcess(holder);
    if (!isCheckableHere(holder)) return { current: { ...current, holderLiveness } };
    return {
      current: { ...current, holderLiveness },
      recheckHolder: () => checkHolderProcess(holder),
    };
  }

  /** Checks (and creates) the lock's directories; see the class. */
  private async ensureDirectories(): Promise<void> {
    for (const directory of this.directories) {
      await ensureFileLockDirectory(directory.path, directory.parents);
    }
  }

  /**
   * The parsed lease file: `undefined` when absent, unparseable or larger than
   * {@link MAX_LEASE_FILE_BYTES}.
   * @throws FileLockUnsafePathError when the directory is not this user's own, or the file is
   *   a symbolic link or not a regular file.
   */
  private async readFile(): Promise<LeaseFile | undefined> {
    await this.ensureDirectories();
    let text: string | undefined;
    try {
      text = await readCapped(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as LeaseFile;
    } catch {
      return undefined;
    }
  }

  /** Writes a temporary file, then renames it over the lease file if the mutex is still ours. */
  private async write(record: LeaseRecord, assertHeld: () => Promise<void>): Promise<string> {
    const version = randomUUID();
    const temporary = `${this.path}.${process.pid}.${version}.tmp`;
    try {
      // 'wx': O_EXCL, so nothing already at that name (a planted link) is written through.
      await writeFile(temporary, JSON.stringify(toLeaseFile(record, version), null, 2), {
        flag: 'wx',
        mode: 0o600,
      });
      await assertHeld();
      await rename(temporary, this.path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return version;
  }

  /**
   * Runs `critical` holding the file mutex; waits (bounded, abortable) for it first.
   * `critical` calls `assertHeld()` right before it commits: it throws if the mutex was
   * compromised or held so long (a stalled event loop) that another process may have found
   * it stale and taken it — then nothing is committed and the elector simply retries.
   */
  private async withMutex<T>(
    signal: AbortSignal | undefined,
    critical: (assertHeld: () => Promise<void>) => Promise<T>,
  ): Promise<T> {
    await this.ensureDirectories();
    const mutex = await acquireFileMutex(this.path, {
      staleMs: MUTEX_STALE_MS,
      waitMs: MUTEX_WAIT_MS,
      signal,
    });
    try {
      return await critical(() => mutex.assertHeld());
    } finally {
      await mutex.release();
    }
  }
}

/**
 * The text of the file at `path`, opened without following a symbolic link (O_NOFOLLOW) and
 * without blocking (a FIFO), read up to {@link MAX_LEASE_FILE_BYTES}; `undefined` when larger.
 * @throws FileLockUnsafePathError for a symbolic link or anything but a regular file; ENOENT
 *   and other file-system errors as they are.
 */
async function readCapped(path: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, READ_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new FileLockUnsafePathError(path, 'symlink', lockMessages.fileLockSymlink(path));
    }
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new FileLockUnsafePathError(
        path,
        'not-a-regular-file',
        lockMessages.fileLockNotARegularFile(path),
      );
    }
    const buffer = Buffer.alloc(Math.min(stats.size, MAX_LEASE_FILE_BYTES) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return length > MAX_LEASE_FILE_BYTES ? undefined : buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}

function toLeaseFile(record: LeaseRecord, version: string): LeaseFile {
  return {
    version,
    record: {
      holderIdentity: record.holderIdentity,
      leaseDurationSeconds: record.leaseDurationSeconds,
      leaseTransitions: record.leaseTransitions,
      acquireTime: record.acquireTime?.toISOString(),
      renewTime: record.renewTime?.toISOString(),
      strategy: record.strategy,
      preferredHolder: record.preferredHolder,
      scheduleLedger: record.scheduleLedger,
      handoff: record.handoff,
    },
    // The elector writes a record naming a holder as that holder (acquire, renew), or as the
    // previous leader handing it over: then this process is not the holder's.
    holderProcess:
      record.holderIdentity === '' || record.handoff !== undefined
        ? undefined
        : thisHolderProcess(),
  };
}

function fromLeaseFile(file: LeaseFile | undefined): VersionedLeaseRecord | undefined {
  if (typeof file?.version !== 'string' || typeof file.record !== 'object' || !file.record) {
    return undefined;
  }
  return { record: parseLeaseRecord({ ...file.record }), version: file.version };
}
