import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { basename, dirname, isAbsolute, join, sep } from 'node:path';
import { FileLockUnsafePathError } from '../../errors.js';
import { lockMessages } from '../lock.messages.js';

/**
 * This user's directory for file locks: `$XDG_RUNTIME_DIR/nest-leader` when `XDG_RUNTIME_DIR`
 * is set (an absolute path: the per-user runtime directory of systemd/pam, mode 0700), else
 * `<os.tmpdir()>/nest-leader-<uid>`. Per user, so no other user of the host can create it first
 * in a shared temp directory and control the election records in it (FileLock creates it 0700
 * and refuses it when another user owns it, see `ensureFileLockDirectory`).
 *
 * Replicas that must share a lock must therefore run as the same user with the same
 * `XDG_RUNTIME_DIR` and `TMPDIR` (a login session sets `XDG_RUNTIME_DIR`, cron and most
 * containers do not): else pass the same `directory` to every FileLock.
 * @param env - default `process.env`
 * @param temporaryDirectory - default `os.tmpdir()` (`TMPDIR`)
 */
export function userFileLockDirectory(
  env: NodeJS.ProcessEnv = process.env,
  temporaryDirectory: string = tmpdir(),
): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && isAbsolute(runtime)) return join(runtime, 'nest-leader');
  const uid = process.getuid?.();
  const user = uid ?? userInfo().username.replace(/[^A-Za-z0-9._-]+/g, '_');
  return join(temporaryDirectory, `nest-leader-${user}`);
}

/**
 * The directory a `FileLock` given only a name keeps its file in:
 * `<user directory>/<project>-<hash>`, one per project and user on the host, so two projects
 * that happen to use the same lease name never share a lock. The user directory is
 * {@link userFileLockDirectory}; `<project>` is the base name of the project root (see
 * {@link projectRoot}) and `<hash>` the first 12 hex digits of the SHA-256 of its absolute path.
 * @param root - the project root; default {@link projectRoot}() of this process
 * @param userDirectory - default {@link userFileLockDirectory}()
 */
export function defaultFileLockDirectory(
  root: string = projectRoot(),
  userDirectory: string = userFileLockDirectory(),
): string {
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 12);
  const name = basename(root).replace(/[^A-Za-z0-9._-]+/g, '_') || 'root';
  return join(userDirectory, `${name}-${hash}`);
}

/**
 * Makes sure `directory` is this user's own before a lock file is read or written in it:
 * created (mode 0700; with its missing parents when `parents`) if absent, then checked with
 * `lstat` — not a symbolic link, a directory, owned by this process's uid and not writable by
 * its group or others. On Windows (no uids) only the first two rules apply.
 * @throws FileLockUnsafePathError naming the directory, the rule broken and the fix;
 *   file-system errors of `mkdir`/`lstat` (EACCES…) as they are.
 */
export async function ensureFileLockDirectory(
  directory: string,
  parents = false,
  uid: number | undefined = process.getuid?.(),
): Promise<void> {
  let stats = await lstat(directory).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!stats) {
    await mkdir(directory, { mode: 0o700, recursive: parents }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error; // made meanwhile: checked below like any other
      },
    );
    stats = await lstat(directory);
  }
  const refuse = (reason: FileLockUnsafePathError['reason'], message: string) =>
    new FileLockUnsafePathError(directory, reason, message);
  if (stats.isSymbolicLink()) {
    throw refuse('symlink', lockMessages.fileLockDirectorySymlink(directory));
  }
  if (!stats.isDirectory()) {
    throw refuse('not-a-directory', lockMessages.fileLockNotADirectory(directory));
  }
  if (uid === undefined) return;
  if (stats.uid !== uid) {
    throw refuse(
      'other-owner',
      lockMessages.fileLockDirectoryOtherOwner(directory, stats.uid, uid),
    );
  }
  if ((stats.mode & 0o022) !== 0) {
    throw refuse(
      'writable-by-others',
      lockMessages.fileLockDirectoryWritableByOthers(directory, stats.mode),
    );
  }
}

/**
 * The project a process belongs to: the nearest directory holding a `package.json` at or
 * above the entry script (`process.argv[1]`; for a script inside `node_modules`, such as a
 * test runner's, the directory that holds that `node_modules`), else the working directory.
 * Replicas started from one project therefore agree whatever their working directory.
 */
export function projectRoot(
  entry: string | undefined = process.argv[1],
  cwd: string = process.cwd(),
): string {
  if (!entry) return cwd;
  let path: string;
  try {
    path = realpathSync(entry);
  } catch {
    return cwd;
  }
  const inModules = path.indexOf(`${sep}node_modules${sep}`);
  let dir = inModules >= 0 ? path.slice(0, inModules) : dirname(path);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return cwd;
    dir = parent;
  }
}
