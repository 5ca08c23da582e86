/**
 * The official Python `kubernetes` client, installed from PyPI at the version pinned in
 * `test/python/requirements.txt`, into a cached virtualenv: `<cache>/python-peers/<key>/`,
 * where `<cache>` is `$NEST_LEADER_CACHE_DIR`, else `$XDG_CACHE_HOME/nest-leader`, else
 * `~/.cache/nest-leader` — outside the clone, like Go's build cache, so a fresh clone (CI) and
 * every worktree reuse it. The key hashes the requirements file and the `python3` version, so
 * changing the pin (or the interpreter) builds a new virtualenv. Building one takes about 45 s
 * even from pip's cache (about a minute when downloading); it prints progress lines meanwhile.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { repoRoot } from './control-plane.js';

/** The Python sources of the peers (candidate.py, requirements.txt). */
export const PYTHON_DIR = join(repoRoot, 'test/python');
const REQUIREMENTS = join(PYTHON_DIR, 'requirements.txt');

/** The pinned requirement line, e.g. `kubernetes==37.0.2`. */
export function pinnedPythonClient(): string {
  const line = readFileSync(REQUIREMENTS, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('kubernetes=='));
  if (!line) throw new Error(`${REQUIREMENTS} pins no kubernetes==<version>`);
  return line;
}

/**
 * Resolves the virtualenv's `python` with the pinned client importable, building the
 * virtualenv first if needed (`python3 -m venv`, `pip install -r requirements.txt`).
 * @throws Error with pip's output when python3 or the install fails (never skips).
 */
export async function ensurePythonClient(): Promise<string> {
  const pythonVersion = execFileSync('python3', ['--version'], { encoding: 'utf8' }).trim();
  const key = createHash('sha256')
    .update(readFileSync(REQUIREMENTS))
    .update(pythonVersion)
    .digest('hex')
    .slice(0, 12);
  const dir = join(cacheDir(), 'python-peers', key);
  const python = join(dir, 'bin/python');
  const marker = join(dir, '.complete');
  if (existsSync(marker)) return python;
  const pin = pinnedPythonClient();
  const started = performance.now();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  progress(`creating a virtualenv for ${pin} in ${dir}`);
  await run('python3', ['-m', 'venv', dir]);
  progress(`pip install ${pin} (from PyPI, or pip's cache)`);
  await run(python, [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--progress-bar',
    'off',
    '-r',
    REQUIREMENTS,
  ]);
  await run(python, ['-c', 'import kubernetes.leaderelection.leaderelection']);
  writeFileSync(marker, `${pin}\n`);
  progress(`${pin} ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return python;
}

/** Where cached test tools live, outside the clone. */
function cacheDir(): string {
  if (process.env.NEST_LEADER_CACHE_DIR) return process.env.NEST_LEADER_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'nest-leader');
}

function progress(message: string): void {
  process.stdout.write(`# python peers: ${message}\n`);
}

/** Runs a command, echoing each output line as a progress line; rejects on failure. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (line.trim() === '') continue;
        output.push(line);
        if (/^(Collecting|Successfully|Installing)/.test(line)) progress(line.trim());
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else {
        const tail = output.slice(-30).join('\n');
        reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${tail}`));
      }
    });
  });
}
