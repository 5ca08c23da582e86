/**
 * The holder-process proof of FileLock, with real OS processes: a holder process writes its
 * record, and another process (this test) reads what the OS proves about it. Linux only (the
 * proof needs /proc); elsewhere the cases that need it are skipped.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { FileLock } from 'nest-leader/core';

const onLinux = process.platform === 'linux';
const cwd = fileURLToPath(new URL('.', import.meta.url));

/** Starts a Node process that writes a record naming `identity` as holder, and stays alive. */
async function holderProcess(path: string, identity = 'holder-1'): Promise<ChildProcess> {
  const script = `
    import { FileLock } from 'nest-leader/core';
    await new FileLock({ path: ${JSON.stringify(path)} }).create({
      holderIdentity: ${JSON.stringify(identity)}, leaseDurationSeconds: 15, leaseTransitions: 1,
    });
    console.log('written');
    setInterval(() => undefined, 60_000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'written') resolve();
    });
    child.once('exit', (code) => reject(new Error(`holder process exited (${code})`)));
  });
  return child;
}

/** Starts `command` and resolves once it runs (has a PID). */
function otherProcess(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: 'ignore' });
  children.push(child);
  return child;
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Field 22 of /proc/<pid>/stat (start time, clock ticks since boot). */
function startTimeOf(pid: number): string {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** Rewrites the stored holder proof with `change` (as a record from elsewhere would be). */
function editHolderProcess(path: string, change: Record<string, unknown>): void {
  const file = JSON.parse(readFileSync(path, 'utf8'));
  file.holderProcess = { ...file.holderProcess, ...change };
  writeFileSync(path, JSON.stringify(file));
}

const children: ChildProcess[] = [];
let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'nest-leader-holder-'));
  path = join(dir, 'jobs.lease.json');
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('FileLock: what the OS proves about the holder process', { skip: !onLinux }, () => {
  test('the record carries the holder process: hostname, boot id, PID namespace, PID and start time', async () => {
    const holder = await holderProcess(path);

    const stored = JSON.parse(readFileSync(path, 'utf8')).holderProcess;

    assert.equal(stored.pid, holder.pid);
    assert.equal(stored.startTime, startTimeOf(holder.pid!));
    assert.match(stored.pidNamespace, /^pid:\[\d+\]$/);
    assert.match(stored.bootId, /^[0-9a-f-]{36}$/);
    assert.equal(typeof stored.hostname, 'string');
  });

  test('a live holder is alive (not taken for dead)', async () => {
    await holderProcess(path);

    const current = await new FileLock({ path }).get();

    assert.deepEqual(current?.holderLiveness, { state: 'alive' });
  });

  test('a holder killed with SIGKILL is gone: its PID no longer exists', async () => {
    const holder = await holderProcess(path);
    await killed(holder);

    const current = await new FileLock({ path }).get();

    assert.equal(current?.holderLiveness?.state, 'gone');
    assert.match(
      JSON.stringify(current?.holderLiveness),
      new RegExp(`PID ${holder.pid} no longer exists`),
    );
  });

  test('PID reuse: a record naming a live PID that another process now has is gone, not alive', async () => {
    const holder = await holderProcess(path);
    const stranger = otherProcess('sleep', ['30']);
    await killed(holder);
    // What the record of a dead holder looks like once its PID has been given to `stranger`:
    // the same PID, a different start time.
    editHolderProcess(path, { pid: stranger.pid });
    assert.notEqual(
      startTimeOf(stranger.pid!),
      JSON.parse(readFileSync(path, 'utf8')).holderProcess.startTime,
    );

    const current = await new FileLock({ path }).get();

    assert.equal(current?.holderLiveness?.state, 'gone');
    assert.match(JSON.stringify(current?.holderLiveness), /was reused/);
  });

  test('a live process recorded with its own start time is alive, whoever wrote the record', async () => {
    await holderProcess(path);
    const other = otherProcess('sleep', ['30']);
    editHolderProcess(path, { pid: other.pid, startTime: startTimeOf(other.pid!) });

    const current = await new FileLock({ path }).get();

    assert.deepEqual(current?.holderLiveness, { state: 'alive' });
  });

  test('a holder that exited but was not reaped yet (a zombie) is gone', async () => {
    await holderProcess(path);
    // `sh` backgrounds `sleep 0`, then becomes `sleep 5`, which never reaps it: a zombie.
    const parent = otherProcess('sh', ['-c', 'sleep 0 & exec sleep 5']);
    let zombie: number | undefined;
    for (let i = 0; i < 200 && zombie === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const children = readChildren(parent.pid!);
      if (children[0] && stateOf(children[0]) === 'Z') zombie = children[0];
    }
    assert.ok(zombie, 'no zombie appeared');
    editHolderProcess(path, { pid: zombie, startTime: startTimeOf(zombie) });

    const current = await new FileLock({ path }).get();

    assert.equal(current?.holderLiveness?.state, 'gone');
    assert.match(JSON.stringify(current?.holderLiveness), /zombie/);
  });

  test('another host, boot or PID namespace, or no proof at all: unknown, never gone', async () => {
    const holder = await holderProcess(path);
    await killed(holder); // dead — yet from elsewhere nothing may be concluded
    const original = JSON.parse(readFileSync(path, 'utf8')).holderProcess;
    const lock = new FileLock({ path });
    const cases: [Record<string, unknown> | undefined, RegExp][] = [
      [{ hostname: `${original.hostname}-elsewhere` }, /another host/],
      [{ bootId: '00000000-0000-0000-0000-000000000000' }, /another machine or before a reboot/],
      [{ pidNamespace: 'pid:[1]' }, /another PID namespace/],
      [undefined, /no proof/],
    ];
    for (const [change, reason] of cases) {
      const file = JSON.parse(readFileSync(path, 'utf8'));
      file.holderProcess = change && { ...original, ...change };
      writeFileSync(path, JSON.stringify(file));

      const liveness = (await lock.get())?.holderLiveness;

      assert.equal(liveness?.state, 'unknown', JSON.stringify(change));
      assert.match(JSON.stringify(liveness), reason);
    }
  });

  test('a released record (no holder) carries no holder process', async () => {
    const lock = new FileLock({ path });
    const version = await lock.create({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      leaseTransitions: 1,
    });
    await lock.update(
      { holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 1 },
      version,
    );

    assert.equal(JSON.parse(readFileSync(path, 'utf8')).holderProcess, undefined);
    assert.equal((await lock.get())?.holderLiveness, undefined);
  });
});

function readChildren(pid: number): number[] {
  const children: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (text) children.push(...text.split(' ').map(Number));
  }
  return children;
}

function stateOf(pid: number): string {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[0]!;
}
