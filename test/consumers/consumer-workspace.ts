/**
 * Prepares the consumer matrix outside the workspace: packs nest-leader with `pnpm pack`,
 * provides Node 22.15 (the npm registry's `node` package) beside the pinned Node 24, installs
 * each flavor's dependencies from its committed lockfile into a cache keyed by the lockfile's
 * hash (`.cache/consumers/`, ignored), and lays out fresh apps in the OS temp directory
 * (hard-linked copies of the cached node_modules, then `npm install --no-save <tarball>`).
 *
 * Progress goes to stderr (`# consumers: …`), with how long the cold steps usually take.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Flavor, packageJson, writeApp } from './consumer-apps.js';

// test/dist/consumers → the repository root.
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const sourceDir = join(repoRoot, 'test/consumers');
export const cacheDir = join(repoRoot, '.cache/consumers');
const npmCache = join(cacheDir, 'npm-cache');

/** The Node 22 line's oldest supported release, run from the npm registry's `node` package. */
export const NODE22_VERSION = '22.15.0';

export function progress(message: string): void {
  process.stderr.write(`# consumers: ${message}\n`);
}

/** Runs a command; rejects with its output tail when it exits non-zero. */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const append = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-20_000));
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10 * 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise(output);
      else
        reject(
          new Error(
            `${command} ${args.join(' ')} (in ${options.cwd}) exited with ${code ?? signal}:\n${output.slice(-6_000)}`,
          ),
        );
    });
  });
}

const timed = async <T>(what: string, usually: string, work: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  progress(`${what} (${usually})…`);
  const result = await work();
  progress(`${what}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
};

/** npm on the pinned Node 24 (the one running this file), with the matrix's own npm cache. */
function npm(args: string[], cwd: string, timeoutMs?: number): Promise<string> {
  return run('npm', [...args, '--cache', npmCache, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    timeoutMs,
  });
}

/** Packs nest-leader (prepack builds dist/esm and dist/commonjs with tshy) into `dir`. */
export async function packTarball(dir: string): Promise<string> {
  return timed('pnpm pack nest-leader', 'tshy builds ESM + CommonJS, about 20-40 s', async () => {
    await run('pnpm', ['--filter', 'nest-leader', 'pack', '--pack-destination', dir], {
      cwd: repoRoot,
    });
    const tarball = readdirSync(dir).find((f) => /^nest-leader-.*\.tgz$/.test(f));
    if (!tarball) throw new Error(`pnpm pack wrote no nest-leader-*.tgz into ${dir}`);
    return join(dir, tarball);
  });
}

/** Path of a Node 22.15 binary, installed once into the cache from the npm `node` package. */
export async function node22(): Promise<string> {
  const dir = join(cacheDir, `node-${NODE22_VERSION}`);
  const binary = join(dir, 'node_modules/node/bin/node');
  if (existsSync(binary)) return binary;
  await timed(`installing node@${NODE22_VERSION} (npm)`, 'once; about 15 s', async () => {
    const staging = `${dir}.tmp-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, 'package.json'), '{ "private": true }\n');
    await npm(['install', `node@${NODE22_VERSION}`], staging);
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  });
  return binary;
}

function lockfileOf(flavor: Flavor): string {
  return join(sourceDir, 'lockfiles', `${flavor.name}.package-lock.json`);
}

/**
 * The flavor's installed dependencies (everything but nest-leader), cached under a key made
 * of its package.json and lockfile, so a warm run installs nothing from the registry.
 */
async function cachedInstall(flavor: Flavor): Promise<string> {
  const manifest = `${JSON.stringify(packageJson(flavor), null, 2)}\n`;
  const lockfile = readFileSync(lockfileOf(flavor), 'utf8');
  const key = createHash('sha256').update(manifest).update(lockfile).digest('hex').slice(0, 16);
  const dir = join(cacheDir, 'installs', `${flavor.name}-${key}`);
  if (existsSync(join(dir, 'node_modules/.matrix-complete'))) return dir;
  await timed(`npm install ${flavor.name}`, 'cold, about 1 min; cached after that', async () => {
    const staging = `${dir}.tmp-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, 'package.json'), manifest);
    writeFileSync(join(staging, 'package-lock.json'), lockfile);
    // `npm install` with the lockfile rather than `npm ci`: npm 11 leaves other platforms'
    // optional packages (@unrs/resolver-binding-*) out of lockfiles and then `npm ci` refuses
    // them as out of sync. The locked versions are still what gets installed.
    await npm(['install', '--prefer-offline'], staging, 15 * 60_000);
    writeFileSync(join(staging, 'node_modules/.matrix-complete'), `${key}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  });
  return dir;
}

/**
 * A fresh app of `flavor` in `root` (outside the workspace, so nothing resolves from the
 * workspace's node_modules): sources written like `nest new`, the cached dependencies
 * hard-linked in, the tarball installed with npm, then built with the app's own `tsc`.
 */
export async function prepareApp(root: string, flavor: Flavor, tarball: string): Promise<string> {
  const installed = await cachedInstall(flavor);
  const app = join(root, flavor.name);
  writeApp(app, flavor);
  copyFileSync(lockfileOf(flavor), join(app, 'package-lock.json'));
  try {
    execFileSync('cp', ['-al', join(installed, 'node_modules'), join(app, 'node_modules')]);
  } catch {
    execFileSync('cp', ['-a', join(installed, 'node_modules'), join(app, 'node_modules')]);
  }
  // npm rewrites its hidden lockfile in place; unlink the hard link so the cache stays pristine.
  rmSync(join(app, 'node_modules/.package-lock.json'), { force: true });
  await timed(`${flavor.name}: npm install <tarball> + build`, 'about 15-30 s', async () => {
    await npm(['install', '--no-save', '--prefer-offline', tarball], app);
    await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
      cwd: app,
    });
  });
  return app;
}

/** A fresh directory for the apps, outside the repository. */
export function freshRoot(): string {
  return mkdtempSync(join(tmpdir(), 'nest-leader-consumers-'));
}
