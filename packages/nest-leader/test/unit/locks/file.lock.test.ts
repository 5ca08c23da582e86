import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError, LockConflictError } from 'nest-leader';
import {
  defaultFileLockDirectory,
  FileLock,
  projectRoot,
  userFileLockDirectory,
} from 'nest-leader/core';

const record = {
  holderIdentity: 'a',
  leaseDurationSeconds: 15,
  leaseTransitions: 2,
  acquireTime: new Date('2026-01-30T10:00:00.123Z'),
  renewTime: new Date('2026-01-30T10:00:05.456Z'),
};

describe('FileLock', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'nest-leader-filelock-'));
    path = join(dir, 'nested', 'jobs.lease.json');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('create, get and update round-trip the record with new versions', async () => {
    const lock = new FileLock({ path });
    assert.equal(await lock.get(), undefined);

    const v1 = await lock.create(record);
    const v2 = await lock.update({ ...record, holderIdentity: 'b' }, v1);

    assert.notEqual(v1, v2);
    assert.deepEqual(await lock.get(), {
      record: { ...record, holderIdentity: 'b' },
      version: v2,
      holderLiveness: { state: 'alive' }, // written by this (live) process
    });
  });

  test('the schedule ledger text is stored with the record and read back unchanged', async () => {
    const lock = new FileLock({ path });
    const ledger = '{"v":1,"jobs":{"Billing.close":{"c":["2026-01-30T10:00:00.000Z",2]}}}';

    const version = await lock.create({ ...record, scheduleLedger: ledger });

    assert.deepEqual(await lock.get(), {
      record: { ...record, scheduleLedger: ledger },
      version,
      holderLiveness: { state: 'alive' },
    });
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).record.scheduleLedger, ledger);
  });

  test('a handoff record keeps its marker and names no holder process (the writer is not the holder)', async () => {
    const lock = new FileLock({ path });
    const handoff = { to: 'b', leaseTransitions: 3 };
    const handedOff = { ...record, holderIdentity: 'b', leaseTransitions: 3, handoff };

    const version = await lock.create(handedOff);

    const current = await lock.get();
    assert.deepEqual(current?.record, handedOff);
    assert.equal(current?.version, version);
    assert.notEqual(current?.holderLiveness?.state, 'alive');
    assert.notEqual(current?.holderLiveness?.state, 'gone');
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).holderProcess, undefined);
  });

  test('the file is readable JSON with the version and the record', async () => {
    const lock = new FileLock({ path });
    const version = await lock.create(record);

    const file = JSON.parse(readFileSync(path, 'utf8'));

    assert.equal(file.version, version);
    assert.equal(file.record.holderIdentity, 'a');
    assert.equal(file.record.renewTime, '2026-01-30T10:00:05.456Z');
  });

  test('create of an existing record and update of a stale version conflict', async () => {
    const lock = new FileLock({ path });
    const v1 = await lock.create(record);
    await lock.update(record, v1);

    await assert.rejects(lock.create(record), LockConflictError);
    await assert.rejects(lock.update(record, v1), LockConflictError);
  });

  test('a deleted and re-created file never matches an old version', async () => {
    const lock = new FileLock({ path });
    const old = await lock.create(record);
    rmSync(path);
    await lock.create(record);

    await assert.rejects(lock.update(record, old), LockConflictError);
  });

  test('concurrent updates of one version: exactly one wins', async () => {
    const locks = Array.from({ length: 8 }, () => new FileLock({ path }));
    const version = await locks[0]!.create(record);

    const results = await Promise.allSettled(
      locks.map((lock, i) => lock.update({ ...record, holderIdentity: `c${i}` }, version)),
    );

    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(r.reason instanceof LockConflictError);
    }
  });

  test('a mutex left by a process killed mid-write is taken over once stale', async () => {
    const lock = new FileLock({ path });
    const version = await lock.create(record);
    mkdirSync(`${path}.lock`);
    const past = new Date(Date.now() - 10_000);
    utimesSync(`${path}.lock`, past, past);

    await lock.update({ ...record, holderIdentity: 'b' }, version);

    assert.equal((await lock.get())!.record.holderIdentity, 'b');
  });

  test('waiting for a busy mutex ends when the signal aborts', async () => {
    const lock = new FileLock({ path });
    const version = await lock.create(record);
    mkdirSync(`${path}.lock`);

    const controller = new AbortController();
    const waiting = lock.update(record, version, controller.signal);
    await new Promise((resolve) => setImmediate(resolve)); // let it find the mutex busy
    controller.abort();

    await assert.rejects(waiting, { name: 'AbortError' });
  });

  test('unparseable content reads as no record and can be created again', async () => {
    mkdirSync(join(dir, 'nested'));
    writeFileSync(path, '{ half a rec');
    const lock = new FileLock({ path });

    assert.equal(await lock.get(), undefined);
    await lock.create(record);
    assert.equal((await lock.get())!.record.holderIdentity, 'a');
  });

  test('{ name, directory } names the file <directory>/<name>.lease.json', () => {
    assert.equal(new FileLock({ name: 'jobs', directory: dir }).path, join(dir, 'jobs.lease.json'));
    assert.equal(
      new FileLock({ name: 'jobs' }).path,
      join(defaultFileLockDirectory(), 'jobs.lease.json'),
    );
    assert.equal(new FileLock({ path }).description, `FileLock ${path}`);
  });

  test('rejects an invalid name or an empty path', () => {
    assert.throws(() => new FileLock({ name: '../etc/passwd' }), InvalidLeaderElectionOptionError);
    assert.throws(() => new FileLock({ path: ' ' }), InvalidLeaderElectionOptionError);
  });
});

describe('defaultFileLockDirectory', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'nest-leader-projects-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const project = (name: string): string => {
    mkdirSync(join(dir, name, 'dist'), { recursive: true });
    mkdirSync(join(dir, name, 'node_modules', 'jest', 'bin'), { recursive: true });
    writeFileSync(join(dir, name, 'package.json'), '{}');
    writeFileSync(join(dir, name, 'dist', 'main.js'), '');
    writeFileSync(join(dir, name, 'node_modules', 'jest', 'bin', 'jest.js'), '');
    return join(dir, name);
  };

  test("is one directory per project in this user's directory, named after it", () => {
    const directory = defaultFileLockDirectory();

    assert.equal(dirname(directory), userFileLockDirectory());
    assert.match(directory, /[\w.-]+-[0-9a-f]{12}$/);
  });

  test("the user's directory is $XDG_RUNTIME_DIR/nest-leader, else nest-leader-<uid> in the temp directory", () => {
    assert.equal(
      userFileLockDirectory({ XDG_RUNTIME_DIR: '/run/user/1000' }, dir),
      '/run/user/1000/nest-leader',
    );
    assert.equal(userFileLockDirectory({}, dir), join(dir, `nest-leader-${process.getuid!()}`));
    assert.equal(
      userFileLockDirectory({ XDG_RUNTIME_DIR: 'relative' }, dir),
      join(dir, `nest-leader-${process.getuid!()}`),
      'a relative XDG_RUNTIME_DIR is ignored, as the XDG spec asks',
    );
  });

  test('the project is the nearest package.json above the entry script, whatever the cwd', () => {
    const billing = project('billing');

    assert.equal(projectRoot(join(billing, 'dist', 'main.js'), tmpdir()), billing);
    assert.equal(
      projectRoot(join(billing, 'node_modules', 'jest', 'bin', 'jest.js'), '/'),
      billing,
    );
  });

  test('two projects with the same lease name get different directories', () => {
    const billing = defaultFileLockDirectory(project('billing'), dir);
    mkdirSync(join(dir, 'other'));
    const other = defaultFileLockDirectory(project(join('other', 'billing')), dir);

    assert.notEqual(billing, other);
    assert.equal(dirname(billing), dir);
    assert.match(billing, /\/billing-[0-9a-f]{12}$/);
    assert.match(other, /\/billing-[0-9a-f]{12}$/);
  });

  test('falls back to the working directory without an entry script or package.json', () => {
    assert.equal(projectRoot('', dir), dir);
    writeFileSync(join(dir, 'script.js'), '');
    assert.equal(projectRoot(join(dir, 'missing.js'), dir), dir);
  });
});
