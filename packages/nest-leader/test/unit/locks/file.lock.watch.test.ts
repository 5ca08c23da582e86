import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { FileLock, type VersionedLeaseRecord } from 'nest-leader/core';

/** What a watch reported, in order. */
function recorder() {
  const seen: { records: (VersionedLeaseRecord | undefined)[]; connected: number } = {
    records: [],
    connected: 0,
  };
  const listener = {
    onRecord: (current: VersionedLeaseRecord | undefined) => void seen.records.push(current),
    onConnected: () => void seen.connected++,
    onDisconnected: () => undefined,
    onUnavailable: (error: unknown) => assert.fail(`unavailable: ${String(error)}`),
  };
  return { seen, listener };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (condition()) return;
    await sleep(10);
  }
  assert.fail(`never: ${what}`);
}

describe('FileLock.watch', () => {
  let dir: string;
  let path: string;
  let controller: AbortController;
  const children: ChildProcess[] = [];
  beforeEach(() => {
    controller = new AbortController();
    dir = mkdtempSync(join(tmpdir(), 'nest-leader-filewatch-'));
    path = join(dir, 'jobs.lease.json');
  });
  afterEach(() => {
    controller.abort();
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('reports the record as first seen, then every write by another lock as it lands', async () => {
    const writer = new FileLock({ path });
    const v1 = await writer.create({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      leaseTransitions: 1,
    });
    const { seen, listener } = recorder();

    new FileLock({ path }).watch(listener, controller.signal);
    await until(() => seen.connected === 1, 'connected');
    assert.equal(seen.records.at(-1)?.version, v1);

    const v2 = await writer.update(
      { holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 1 },
      v1,
    );
    await until(() => seen.records.at(-1)?.version === v2, 'the release reported');
    assert.equal(seen.records.at(-1)?.record.holderIdentity, '');
  });

  test(
    'reports the record again, holder gone, once the holder process is killed',
    { skip: process.platform !== 'linux' },
    async () => {
      const script = `
        import { FileLock } from 'nest-leader/core';
        await new FileLock({ path: ${JSON.stringify(path)} }).create({
          holderIdentity: 'holder', leaseDurationSeconds: 15, leaseTransitions: 1,
        });
        console.log('written');
        setInterval(() => undefined, 60_000);
      `;
      const holder = spawn(process.execPath, ['--input-type=module', '-e', script], {
        cwd: fileURLToPath(new URL('.', import.meta.url)),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(holder);
      await new Promise<void>((resolve) =>
        createInterface({ input: holder.stdout! }).on('line', (l) => l === 'written' && resolve()),
      );
      const { seen, listener } = recorder();
      new FileLock({ path }).watch(listener, controller.signal);
      await until(() => seen.connected === 1, 'connected');
      assert.equal(seen.records.at(-1)?.holderLiveness?.state, 'alive');

      holder.kill('SIGKILL');

      await until(() => seen.records.at(-1)?.holderLiveness?.state === 'gone', 'holder gone');
      assert.equal(seen.records.length, 2); // the same version, reported again
      assert.equal(seen.records[0]?.version, seen.records[1]?.version);
    },
  );
});
