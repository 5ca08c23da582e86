/**
 * The sidecar's `--leader-file`: a file that exists only while this candidate leads, on a
 * volume shared with the application container (the seeds' shared-volume pattern).
 */
import { rmSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';

/** What the leader file holds (JSON): who leads, and the term's fencing token. */
export interface LeaderFileContent {
  /** This candidate's identity. */
  name: string;
  /** The term's `leaseTransitions`: a fencing token for the application's writes. */
  leaseTransitions: number;
  /** When the term began (RFC 3339). */
  acquiredAt: string;
}

/**
 * Writes, refreshes and removes the leader file. Writes go to `<path>.tmp` and are renamed
 * over `path`, so a reader never sees a half-written file. While leading, the file's mtime is
 * refreshed (rewritten) every retry period: a reader can treat a file older than the renew deadline as
 * stale (its sidecar died without removing it, e.g. SIGKILL or OOM).
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
