/**
 * The consumer matrix: the packed nest-leader tarball, installed with npm into fresh apps
 * outside the workspace (Nest 11 CommonJS + Jest, Nest 12 ESM + Vitest; Express and Fastify),
 * on Node 22.15 and Node 24. For every cell: the app's own spec passes, two replicas on the
 * file lock elect exactly one leader, the follower's `@LeaderOnly()` route answers 503 with
 * `Retry-After`, only the leader's `@Interval` runs, `require()` and `import` see one copy of
 * the package, and SIGTERM to the leader hands over in under 2 s with Nest's exit status. One
 * cell (Nest 12 ESM + Express on this Node) also runs the app without `@kubernetes/client-node`
 * (an optional peer) on the file lock. Once per Nest line (Express, this Node), the package
 * README's getting-started path runs as an app of its own (getting-started.ts).
 *
 * Alone: `pnpm test:consumers`. Cold (empty `.cache/consumers`) it installs from the npm
 * registry; warm it installs only the tarball.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FLAVORS, LOCK_ERRORS_SPEC, type Flavor } from './consumer-apps.js';
import { prepareGettingStarted, runGettingStarted } from './getting-started.js';
import { eventually } from '../support/eventually.js';
import { role, startReplica, type Replica } from './consumer-replicas.js';
import {
  NODE22_VERSION,
  freshRoot,
  node22,
  packTarball,
  prepareApp,
  progress,
  run,
} from './consumer-workspace.js';

interface NodeRuntime {
  label: string;
  binary: () => string;
}

let node22Binary = '';
const NODES: NodeRuntime[] = [
  { label: `Node ${NODE22_VERSION}`, binary: () => node22Binary },
  { label: `Node ${process.versions.node}`, binary: () => process.execPath },
];

/** SIGTERM handover bound asserted by every cell (the bound). */
const HANDOVER_BOUND_MS = 2_000;

const root = freshRoot();
const apps = new Map<string, string>();
const matrixStarted = performance.now();

describe('consumer matrix (packed tarball in fresh apps)', { concurrency: 2 }, () => {
  before(
    async () => {
      progress(`apps in ${root}`);
      const [tarball, binary] = await Promise.all([packTarball(root), node22()]);
      node22Binary = binary;
      // Two flavors at a time: each install/build is mostly one busy core.
      for (let i = 0; i < FLAVORS.length; i += 2) {
        const pair = FLAVORS.slice(i, i + 2);
        const dirs = await Promise.all(pair.map((flavor) => prepareApp(root, flavor, tarball)));
        pair.forEach((flavor, j) => apps.set(flavor.name, dirs[j]!));
      }
    },
    { timeout: 25 * 60_000 },
  );

  after(() => {
    progress(`matrix done in ${((performance.now() - matrixStarted) / 1000).toFixed(1)} s`);
    rmSync(root, { recursive: true, force: true });
  });

  for (const flavor of FLAVORS) {
    for (const runtime of NODES) {
      it(`${flavor.name} on ${runtime.label}`, { timeout: 5 * 60_000 }, () =>
        cell(flavor, runtime),
      );
    }
  }

  // The README's getting-started path, once per Nest line (Express, as `nest new` sets it up),
  // on this Node.
  for (const flavor of FLAVORS.filter((f) => f.platform === 'express')) {
    it(`getting started (README) in ${flavor.name}`, { timeout: 5 * 60_000 }, async () => {
      const dir = await prepareGettingStarted(apps.get(flavor.name)!, flavor.nest);
      const { handoverMs } = await runGettingStarted(dir, flavor.nest, process.execPath);
      // Released on SIGTERM: a follower takes over within 1.2 × retryPeriodSeconds (2 s, the
      // default the quick start keeps) when polling, at once when watching the lock.
      assert.ok(handoverMs < 1.2 * 2_000 + 1_000, `handover took ${handoverMs} ms`);
    });
  }
});

/**
 * Runs `body` in a hard-linked copy of `app` whose `@kubernetes/client-node` is removed (the
 * copy's directory entries only: the app keeps its own), then deletes the copy.
 */
async function withoutClientNode<T>(
  app: string,
  label: string,
  body: (copy: string) => Promise<T>,
): Promise<T> {
  const copy = `${app}-without-client-node-${label.replace(/\W+/g, '')}`;
  execFileSync('cp', ['-al', app, copy]);
  rmSync(join(copy, 'node_modules/@kubernetes/client-node'), { recursive: true, force: true });
  try {
    return await body(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** The one cell that also runs the app without `@kubernetes/client-node` (an optional peer). */
const WITHOUT_CLIENT_NODE_FLAVOR = 'nest12-esm-express';

/**
 * `@kubernetes/client-node` is an optional peer: an app without it (a copy of `app` with the
 * package removed) elects on the file lock, leads, and runs its leader-only `@Interval`.
 */
async function fileLockWithoutClientNode(app: string, node: string, leaseName: string) {
  await withoutClientNode(app, 'file-lock', async (copy) => {
    const alone = await startReplica(node, copy, { LEASE_NAME: leaseName, LEADER_LOCK: 'file' });
    try {
      await eventually(
        async () => {
          const { leader, ticks } = await role(alone);
          assert.ok(leader && ticks > 0, `without client-node: leads and ticks`);
        },
        { timeoutMs: 15_000, intervalMs: 50 },
      );
      assert.doesNotMatch(
        alone.output(),
        /@kubernetes\/client-node| (WARN|ERROR) \[/,
        alone.output(),
      );
      progress(
        `${WITHOUT_CLIENT_NODE_FLAVOR}: without @kubernetes/client-node, leads on the file lock`,
      );
    } finally {
      alone.child.kill('SIGKILL');
      await alone.exited;
    }
  });
}

async function cell(flavor: Flavor, runtime: NodeRuntime): Promise<void> {
  const app = apps.get(flavor.name)!;
  const node = runtime.binary();
  const name = `${flavor.name} on ${runtime.label}`;
  const started = performance.now();

  // The app's own spec, as its package.json runs it (Jest for Nest 11, Vitest for Nest 12).
  const runner =
    flavor.nest === 11
      ? ['node_modules/jest/bin/jest.js', '--ci']
      : ['node_modules/vitest/vitest.mjs', 'run'];
  const specOutput = await run(node, runner, { cwd: app, timeoutMs: 4 * 60_000 });
  assert.match(specOutput, flavor.nest === 11 ? /Tests:\s+2 passed/ : /1 passed/);

  if (flavor.nest === 11) {
    // Jest's CommonJS runtime and `lock: 'kubernetes'`: the installed ESM-only client-node is
    // explained (the run above), and a really missing one says "Install it" (a copy of the
    // app with the package removed).
    assert.match(
      specOutput,
      /lock-errors: @kubernetes\/client-node is installed, but it is ESM-only/,
    );
    const missingOutput = await withoutClientNode(app, `${runtime.label}`, (copy) =>
      run(node, [...runner, LOCK_ERRORS_SPEC], {
        cwd: copy,
        env: { CLIENT_NODE: 'missing' },
        timeoutMs: 4 * 60_000,
      }),
    );
    assert.match(missingOutput, /Tests:\s+1 passed/);
    assert.match(missingOutput, /lock-errors: Kubernetes Leases need the peer dependency/);

    // The older starters' set-up: `module: commonjs` with node10 resolution typechecks too.
    await run(node, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.node10.json'], {
      cwd: app,
    });
  }

  // One copy of the package whether it is required or imported (no dual-package hazard), and
  // one copy of each class across its entries (an error thrown by the core is the main entry's).
  const sameCopy = await run(
    node,
    [
      '-e',
      "const c = require('nest-leader'); const k = require('nest-leader/core'); Promise.all([import('nest-leader'), import('nest-leader/core')]).then(([e, ek]) => console.log(c.LeaderModule === e.LeaderModule && c.LeaderElectionService === e.LeaderElectionService && k.LeaderElector === ek.LeaderElector && c.LeaderElectionError === ek.LeaderElectionError))",
    ],
    { cwd: app },
  );
  assert.equal(sameCopy.trim(), 'true', `${name}: require() and import() gave different copies`);

  const leaseName =
    `matrix-${flavor.name}-${runtime.label.replace(/\W+/g, '')}-${process.pid}`.toLowerCase();
  const env = { LEASE_NAME: leaseName, LEADER_LOCK: 'file' };
  const replicas: Replica[] = [];
  try {
    replicas.push(await startReplica(node, app, env), await startReplica(node, app, env));
    let roles = await Promise.all(replicas.map(role));
    await eventually(
      async () => {
        roles = await Promise.all(replicas.map(role));
        assert.ok(
          roles.some((r) => r.leader),
          `${name}: one leader`,
        );
      },
      { timeoutMs: 15_000, intervalMs: 25 },
    );
    // Exactly one leads, and stays the only one.
    for (let i = 0; i < 5; i++) {
      roles = await Promise.all(replicas.map(role));
      assert.equal(roles.filter((r) => r.leader).length, 1, `${name}: ${JSON.stringify(roles)}`);
      await new Promise((done) => setTimeout(done, 100));
    }
    const leaderIndex = roles.findIndex((r) => r.leader);
    const leader = replicas[leaderIndex]!;
    const follower = replicas[1 - leaderIndex]!;
    const leaderIdentity = roles[leaderIndex]!.identity;

    const onFollower = await fetch(`${follower.url}/work`);
    assert.equal(onFollower.status, 503);
    assert.equal(onFollower.headers.get('retry-after'), '1');
    assert.equal(((await onFollower.json()) as { leader: string }).leader, leaderIdentity);
    const onLeader = await fetch(`${leader.url}/work`);
    assert.equal(onLeader.status, 200);
    assert.deepEqual(await onLeader.json(), { identity: leaderIdentity });

    // @Interval + @LeaderOnly: ticks on the leader only.
    await eventually(
      async () => assert.ok((await role(leader)).ticks > 0, `${name}: leader ticks`),
      {
        timeoutMs: 5_000,
        intervalMs: 25,
      },
    );
    assert.equal((await role(follower)).ticks, 0, `${name}: the follower ran leader-only ticks`);

    // SIGTERM to the leader: Nest's shutdown hooks drain and release; the follower takes over.
    leader.child.kill('SIGTERM');
    const signalledAtMs = performance.now();
    await eventually(
      async () => assert.ok((await role(follower)).leader, `${name}: handover after SIGTERM`),
      { timeoutMs: HANDOVER_BOUND_MS + 3_000, intervalMs: 25 },
    );
    const handoverMs = performance.now() - signalledAtMs;
    progress(`${name}: SIGTERM handover ${handoverMs.toFixed(0)} ms`);
    assert.ok(handoverMs < HANDOVER_BOUND_MS, `${name}: handover took ${handoverMs} ms`);
    const exit = await leader.exited;
    // Nest re-raises the signal after its hooks: the process ends by SIGTERM (status 143).
    assert.deepEqual(exit, { code: null, signal: 'SIGTERM' }, `${name}: ${leader.output()}`);
  } finally {
    for (const replica of replicas) replica.child.kill('SIGKILL');
  }
  if (flavor.name === WITHOUT_CLIENT_NODE_FLAVOR && runtime === NODES[1]) {
    await fileLockWithoutClientNode(app, node, `${leaseName}-no-client-node`);
  }
  progress(`${name}: passed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
