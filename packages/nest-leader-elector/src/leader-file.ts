/**
 * The sidecar's `--leader-file`: a file that exists only while this candidate leads, on a
 * volume shared with the application container (the seeds' shared-volume pattern).
 */
import { rmSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import type { LeaderFileContent } from 'nest-leader/core';

/**
 * The leader file's content for a live term, written at `now` (wall clock).
 * @param validForMs - how long the file may be believed: leaseDuration − renewDeadline, ms
 */
export function leaderFileContent(
  term: { name: string; leaseTransitions: number; acquiredAt: Date },
  now: Date,
  validForMs: number,
): LeaderFileContent {
  const expiresMs = now.getTime() + validForMs;
  return {
    name: term.name,
    leaseTransitions: term.leaseTransitions,
    acquiredAt: term.acquiredAt.toISOString(),
    expiresAt: new Date(expiresMs).toISOString(),
    expiresAtUnixSeconds: Math.floor(expiresMs / 1000),
  };
}

/**
 * Writes, refreshes and removes the leader file. Writes go to `<path>.tmp` and are renamed
 * over `path`, so a reader never sees a half-written file. While leading, the file is
 * rewritten every retry period with a later `expiresAt`: a reader treats a file past its
 * `expiresAt` (or, equivalently, older than leaseDuration − renewDeadline) as stale — its
 * sidecar died without removing it (SIGKILL, OOM).
 */
export class LeaderFile {
  constructor(readonly path: string) {}

  /** Removes a file left by an earlier run of this container (the volume outlives it). */
  removeStaleSync(): void {
    rmSync(this.path, { force: true });
  }

  /** Creates (or replaces) the file with `content`. */
  async write(content: LeaderFileContent): Promise<void> {
    const temporary = `${this.path}.tmp`;
    await writeFile(temporary, `${JSON.stringify(content)}\n`);
    await rename(temporary, this.path);
  }

  /** Removes the file (no error when it is absent). */
  async remove(): Promise<void> {
    await rm(this.path, { force: true });
  }
}
