/**
 * The package README's getting-started path, run the way a user follows it, against the packed
 * tarball in a fresh app of the matrix (Nest 11 CommonJS + Jest, Nest 12 ESM + Vitest):
 *
 * - `src/app.module.ts`, `src/health.module.ts` and `src/main.ts` are the README's quick start
 *   and health check (the files under packages/nest-leader/examples/ that the README quotes;
 *   readme-examples.test.ts keeps the quotes equal to them);
 * - `test/app.e2e-spec.ts` is the e2e test the docs show for the app's Nest line (the block
 *   flagged ```` ```ts app=nest11:test/app.e2e-spec.ts ```` or `app=nest12:…`), run as the
 *   starter runs e2e tests (Jest with `test/jest-e2e.json`; Vitest);
 * - then the built app runs as two replicas on the file lock (`lock: 'auto'` with no cluster,
 *   as on a laptop): both are live on `/healthz`, exactly one is ready on `/readyz`, and SIGTERM
 *   to it makes the other ready.
 *
 * For Nest 11 the relative imports lose their `.js`, as the README tells Nest 11 users to write
 * them (Jest does not map `./x.js` to `./x.ts`).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { eventually } from '../support/eventually.js';
import { type NestLine, vitestConfig } from './consumer-apps.js';
import { progress, repoRoot, run } from './consumer-workspace.js';

const packageDir = join(repoRoot, 'packages/nest-leader');

/** The docs pages whose code blocks may belong to the getting-started app. */
function docsPages(): string[] {
  const docs = join(packageDir, 'docs');
  return [
    join(packageDir, 'README.md'),
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md'))
      .map((name) => join(docs, name)),
  ];
}

/** `path → source` of the getting-started app for a Nest line, from the README and docs. */
export function gettingStartedFiles(nest: NestLine): Record<string, string> {
  const example = (name: string) => readFileSync(join(packageDir, 'examples', name), 'utf8');
  const files: Record<string, string> = {
    'src/app.module.ts': example('app.module.ts'),
    'src/health.module.ts': example('health.module.ts'),
    'src/main.ts': example('main.ts'),
  };
  for (const page of docsPages()) {
    const text = readFileSync(page, 'utf8');
    for (const [, line, path, code] of text.matchAll(
      /^```ts app=nest(11|12):(\S+)\n([\s\S]*?)\n```$/gm,
    )) {
      if (Number(line) !== nest) continue;
      assert.equal(files[path!], undefined, `two blocks for ${path} of Nest ${nest}`);
      files[path!] = `${code}\n`;
    }
  }
  assert.ok(files['test/app.e2e-spec.ts'], `no e2e test for Nest ${nest} in the docs`);
  if (nest === 11) {
    for (const [path, source] of Object.entries(files)) {
      files[path] = source.replace(/(from '\.{1,2}\/[^']+)\.js'/g, "$1'");
    }
  }
  return files;
}

/** The Nest starter's `test/jest-e2e.json`. */
const JEST_E2E = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  testEnvironment: 'node',
  testRegex: '.e2e-spec.ts$',
  transform: { '^.+\\.(t|j)s$': 'ts-jest' },
};

/**
 * A copy of the matrix's `app` (its package.json, tsconfigs and installed node_modules,
 * tarball included, hard-linked) whose sources are the getting-started app, built.
 */
export async function prepareGettingStarted(app: string, nest: NestLine): Promise<string> {
  const dir = `${app}-getting-started`;
  mkdirSync(dir);
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) {
    writeFileSync(join(dir, file), readFileSync(join(app, file)));
  }
  execFileSync('cp', ['-al', join(app, 'node_modules'), join(dir, 'node_modules')]);
  const files = gettingStartedFiles(nest);
  if (nest === 11) files['test/jest-e2e.json'] = `${JSON.stringify(JEST_E2E, null, 2)}\n`;
  else files['vitest.config.ts'] = vitestConfig(['test/**/*.e2e-spec.ts']);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: dir,
  });
  return dir;
}

/** No cluster configured, as on a laptop: no kubeconfig, no in-cluster variables. */
function laptopEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
  for (const name of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) {
    delete env[name];
  }
  return env;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Replica {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

async function startReplica(node: string, dir: string, env: NodeJS.ProcessEnv): Promise<Replica> {
  const port = await freePort();
  const child = spawn(node, ['dist/main.js'], {
    cwd: dir,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const append = (chunk: Buffer) => void (log = (log + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, url: `http://127.0.0.1:${port}`, exited, output: () => log };
}

async function status(url: string): Promise<number> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0; // not listening (yet)
  }
}

/**
 * Runs the getting-started path in `dir` (from {@link prepareGettingStarted}): the e2e test,
 * then two replicas with probes and a SIGTERM handover. Returns what it measured.
 */
export async function runGettingStarted(
  dir: string,
  nest: NestLine,
  node: string,
): Promise<{ handoverMs: number }> {
  const env = laptopEnv(mkdtempSync(join(tmpdir(), 'getting-started-home-')));
  const e2e =
    nest === 11
      ? ['node_modules/jest/bin/jest.js', '--ci', '--config', './test/jest-e2e.json']
      : ['node_modules/vitest/vitest.mjs', 'run'];
  const e2eOutput = await run(node, e2e, { cwd: dir, env, timeoutMs: 4 * 60_000 });
  assert.match(e2eOutput, nest === 11 ? /Tests:\s+1 passed, 1 total/ : /Tests\s+1 passed \(1\)/);
  progress(`getting started, Nest ${nest}: the docs' e2e test passed`);

  const replicas = [await startReplica(node, dir, env), await startReplica(node, dir, env)];
  try {
    // Both live; exactly one ready (the leader), the other's /readyz answers 503.
    let ready: number[] = [];
    await eventually(
      async () => {
        const live = await Promise.all(replicas.map((r) => status(`${r.url}/healthz`)));
        assert.deepEqual(live, [200, 200], 'both replicas live on /healthz');
        const readiness = await Promise.all(replicas.map((r) => status(`${r.url}/readyz`)));
        assert.deepEqual([...readiness].sort(), [200, 503], `readyz: ${readiness.join(', ')}`);
        ready = readiness;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${replicas.map((r) => r.output()).join('\n---\n')}`);
    });
    const leader = replicas[ready.indexOf(200)]!;
    const follower = replicas[ready.indexOf(503)]!;

    leader.child.kill('SIGTERM');
    const signalledAt = performance.now();
    await eventually(
      async () => assert.equal(await status(`${follower.url}/readyz`), 200, 'follower ready'),
      { timeoutMs: 10_000, intervalMs: 25 },
    );
    const handoverMs = performance.now() - signalledAt;
    const exit = await leader.exited;
    assert.deepEqual(exit, { code: null, signal: 'SIGTERM' }, leader.output());
    for (const replica of replicas) {
      assert.doesNotMatch(replica.output(), /\b(WARN|ERROR)\b/, replica.output());
    }
    progress(
      `getting started, Nest ${nest}: one of two replicas ready; SIGTERM handover ${handoverMs.toFixed(0)} ms`,
    );
    return { handoverMs };
  } finally {
    for (const replica of replicas) replica.child.kill('SIGKILL');
  }
}
