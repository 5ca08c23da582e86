/**
 * prom-client is an optional peer dependency: an application without it imports nest-leader and
 * elects leaders as usual, and only constructing the Prometheus observer fails, clearly. Checked
 * in a child process whose module resolution cannot find prom-client.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

/** Makes `prom-client` unresolvable, as in an application that never installed it. */
const HIDE_PROM_CLIENT = `
import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, next) {
    if (specifier === 'prom-client' || specifier.startsWith('prom-client/')) {
      throw Object.assign(new Error("Cannot find module 'prom-client'"), { code: 'MODULE_NOT_FOUND' });
    }
    return next(specifier, context);
  },
});
`;

function runWithoutPromClient(script: string): {
  status: number | null;
  stdout: string;
  stderr: string;
} {
  const hooks = `data:text/javascript,${encodeURIComponent(HIDE_PROM_CLIENT)}`;
  const child = spawnSync(
    process.execPath,
    ['--import', hooks, '--input-type=module', '-e', script],
    { cwd: import.meta.dirname, encoding: 'utf8', timeout: 30_000 },
  );
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('without prom-client installed', () => {
  it('nest-leader imports and elects; the Prometheus observer throws MissingPeerDependencyError', () => {
    const run = runWithoutPromClient(`
      await import('nest-leader');
      const lib = await import('nest-leader/core');
      const { PrometheusElectionObserver } = await import('nest-leader/observability');
      const { MemoryLock } = await import('nest-leader/testing');
      const elector = new lib.LeaderElector({
        lock: new MemoryLock({ name: 'no-metrics' }),
        identity: 'solo',
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      });
      elector.start();
      while (!elector.isLeader()) await new Promise((r) => setTimeout(r, 5));
      await elector.stop();
      console.log('elected');
      try {
        new PrometheusElectionObserver();
        console.log('constructed');
      } catch (error) {
        console.log(error instanceof lib.MissingPeerDependencyError, error.packageName, error.message);
      }
    `);
    assert.equal(run.status, 0, run.stderr);
    const [elected, outcome] = run.stdout.trim().split('\n');
    assert.equal(elected, 'elected');
    assert.match(
      outcome!,
      /^true prom-client PrometheusElectionObserver needs the optional peer dependency "prom-client"/,
    );
  });

  it('the hook really hides prom-client (this test can fail)', () => {
    const run = runWithoutPromClient(`await import('prom-client');`);
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /Cannot find module 'prom-client'/);
  });
});
