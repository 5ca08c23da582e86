import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const fixture = fileURLToPath(new URL('./file-lock-app.fixture.js', import.meta.url));

test(
  'a Nest app leading on a FileLock dies by the SIGTERM Nest re-raises (status 143), after releasing',
  { timeout: 30_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nest-leader-signals-'));
    const path = join(dir, 'signals.lease.json');
    const child = spawn(process.execPath, [fixture, path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        child.once('exit', (code, signal) => done({ code, signal })),
      );
      await new Promise<void>((leading, failed) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line === 'LEADING') leading();
        });
        void exited.then((exit) =>
          failed(new Error(`exited before leading: ${JSON.stringify(exit)}`)),
        );
      });

      child.kill('SIGTERM');

      // Not code 0: no signal handler of a dependency swallows the re-raised signal.
      assert.deepEqual(await exited, { code: null, signal: 'SIGTERM' });
      const file = JSON.parse(readFileSync(path, 'utf8')) as { record: { holderIdentity: string } };
      assert.equal(file.record.holderIdentity, '', 'the shutdown hooks released the lease');
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
