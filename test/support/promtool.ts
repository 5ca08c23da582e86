/**
 * Prometheus' promtool, built from the Go module proxy and cached by `scripts/promtool.sh`
 * (version pinned in test/promtool/go.mod). A cold build takes minutes and prints progress lines
 * to stderr; later calls return at once.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './control-plane.js';

const script = join(repoRoot, 'scripts/promtool.sh');

/** Path of the promtool binary. */
export const PROMTOOL = join(repoRoot, 'test/promtool/.bin/promtool');

/**
 * Builds promtool unless the cached binary is up to date; build output goes to this process's
 * stderr. @throws Error if the build fails.
 */
export function buildPromtool(): string {
  const build = spawnSync('bash', [script, 'build'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (build.status !== 0) {
    throw new Error(`scripts/promtool.sh build failed (exit ${build.status}, ${build.signal})`);
  }
  return PROMTOOL;
}

/** What one promtool run printed, and how it ended. */
export interface PromtoolRun {
  status: number | null;
  output: string;
}

/** Runs promtool with `args` in `cwd`; never throws on a non-zero exit. */
export function runPromtool(args: readonly string[], cwd: string): PromtoolRun {
  const run = spawnSync(PROMTOOL, args, { cwd, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
