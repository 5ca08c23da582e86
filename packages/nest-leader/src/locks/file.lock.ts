import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { InvalidLeaderElectionOptionError, LockConflictError } from '../errors.js';
import { defaultFileLockDirectory } from './file-lock-directory.js';
import { acquireFileMutex } from './file-mutex.js';
import { lockMessages } from './lock.messages.js';
import { type FileLockRead, watchFileLock } from './file-lock.watcher.js';
import {
  checkHolderProcess,
  type HolderProcess,
  isCheckableHere,
  thisHolderProcess,
} from './holder-process.js';
import { validateLeaseName } from '../kubernetes/names.js';
import { type LeaseRecord, parseLeaseRecord, type VersionedLeaseRecord } from './resource-lock.js';
import type { LockWatch, LockWatchListener, WatchableLock } from './watchable-lock.js';

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
       * Directory of the lease file; default one per project in the OS temp directory,
       * `<os.tmpdir()>/nest-leader-<project>-<hash>` (see `defaultFileLockDirectory`).
       */
      directory?: string;
    };

/** How long a write waits for the file mutex before failing (the elector retries). */
const MUTEX_WAIT_MS = 5_000;
/** A mutex older than this is stale (its holder died mid-write). */
const MUTEX_STALE_MS = 2_000;

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
 */
export class FileLock implements WatchableLock {
  /** `FileLock <path>`. */
  readonly description: string;
  /** Absolute path of the lease file. */
  readonly path: string;

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
    } else {
      const name = validateLeaseName(opts.name, 'name');
      this.path = resolve(opts.directory ?? defaultFileLockDirectory(), `${name}.lease.json`);
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

  private async readFile(): Promise<LeaseFile | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
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
      await writeFile(temporary, JSON.stringify(toLeaseFile(record, version), null, 2));
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
    await mkdir(dirname(this.path), { recursive: true });
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
