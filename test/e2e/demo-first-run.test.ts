/**
 * First-run experience of `pnpm demo`: the status line's fields are explained (in --help and
 * when the replicas are up), and Ctrl-C through pnpm ends with the demo's own exit status 0,
 * without pnpm's `ELIFECYCLE Command failed`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { STATUS_LEGEND } from '@nest-leader/demo/launcher/demo-cli';
import { freeConsecutivePorts } from '../support/free-ports.js';
import { eventually } from '../support/eventually.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** pnpm as the test run's own pnpm (npm_execpath) or the one on PATH. */
function pnpm(args: string[]) {
  const execPath = process.env.npm_execpath;
  const [command, argv] =
    execPath && /pnpm/.test(execPath) ? [process.execPath, [execPath, ...args]] : ['pnpm', args];
  // Own process group, as a terminal's foreground job: Ctrl-C reaches pnpm, sh and the demo.
  return spawn(command, argv, { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('pnpm demo, first run', { timeout: 180_000 }, () => {
  it('--help explains every field of the status line', async () => {
    const child = pnpm(['--silent', 'demo', '--help']);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise((done) => child.once('exit', done));

    assert.equal(code, 0);
    assert.ok(output.includes(STATUS_LEGEND));
    for (const field of ['holder', 'transitions', 'work', '"-"', '"…"', 'LEADER', 'follower']) {
      assert.ok(STATUS_LEGEND.includes(field), `the legend explains ${field}`);
    }
  });

  it('Ctrl-C stops the replicas cleanly and pnpm exits 0 without ELIFECYCLE', async () => {
    const port = await freeConsecutivePorts(2);
    const child = pnpm(['demo', '--replicas', '2', '--port', String(port)]);
    let output = '';
    const append = (chunk: Buffer) => (output += chunk.toString());
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    const exited = new Promise<{ code: number | null; signal: string | null }>((done) =>
      child.once('exit', (code, signal) => done({ code, signal })),
    );
    try {
      await eventually(
        () =>
          assert.match(
            output,
            /holder \S+ · transitions \d+/,
            `no leader in the status line:\n${output}`,
          ),
        { timeoutMs: 150_000, intervalMs: 200 },
      );
      assert.ok(output.includes(STATUS_LEGEND), 'the legend is printed when the replicas are up');

      process.kill(-child.pid!, 'SIGINT'); // what Ctrl-C does to the foreground process group

      assert.deepEqual(await exited, { code: 0, signal: null }, output);
      assert.doesNotMatch(output, /ELIFECYCLE/);
      assert.match(output, /exited 0, .* exited 0/);
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
});
