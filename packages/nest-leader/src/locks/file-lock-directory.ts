import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';

/**
 * The directory a `FileLock` given only a name keeps its file in:
 * `<os.tmpdir()>/nest-leader-<project>-<hash>`, one per project on the host, so two projects
 * that happen to use the same lease name never share a lock. `<project>` is the base name of
 * the project root (see {@link projectRoot}) and `<hash>` the first 12 hex digits of the
 * SHA-256 of its absolute path.
 * @param root - the project root; default {@link projectRoot}() of this process
 * @param temporaryDirectory - default `os.tmpdir()` (`TMPDIR`)
 */
export function defaultFileLockDirectory(
  root: string = projectRoot(),
  temporaryDirectory: string = tmpdir(),
): string {
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 12);
  const name = basename(root).replace(/[^A-Za-z0-9._-]+/g, '_') || 'root';
  return join(temporaryDirectory, `nest-leader-${name}-${hash}`);
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
