/**
 * FileLock against another user of the same host: its directory must be this user's own, its
 * files are never followed through symbolic links, reads are capped, and a holder hidden by
 * `/proc`'s hidepid is not taken for gone. Real files, a real second uid (`nobody`, through
 * `chown` and processes started as it) and a real hidepid mount: these cases need root on
 * Linux (the test machines are); elsewhere they cannot be set up.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { FileLockUnsafePathError } from 'nest-leader';
import { FileLock } from 'nest-leader/core';

/** `nobody`: the other user. */
const OTHER_UID = 65534;
const OTHER_GID = 65534;
const cwd = fileURLToPath(new URL('.', import.meta.url));

const record = { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 1 };

/** The FileLock of `{ name }` as a process with `env` (TMPDIR, XDG_RUNTIME_DIR) builds it. */
function defaultLock(env: { TMPDIR: string; XDG_RUNTIME_DIR?: string }): FileLock {
  const saved = { TMPDIR: process.env.TMPDIR, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
  process.env.TMPDIR = env.TMPDIR;
  if (env.XDG_RUNTIME_DIR === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = env.XDG_RUNTIME_DIR;
  try {
    return new FileLock({ name: 'jobs' });
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

function unsafe(reason: FileLockUnsafePathError['reason'], path: string) {
  return (error: unknown) => {
    assert.ok(error instanceof FileLockUnsafePathError, String(error));
    assert.equal(error.reason, reason);
    assert.equal(error.path, path);
    assert.ok(error.message.includes(path), 'the message names the path');
    return true;
  };
}

describe("FileLock: the lock's directory is this user's own", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'nest-leader-other-users-'));
    chmodSync(dir, 0o1777); // a shared temp directory, as /tmp: everyone may create in it
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('the default directory is created 0700 per user: <TMPDIR>/nest-leader-<uid>/<project>-<hash>', async () => {
    const lock = defaultLock({ TMPDIR: dir });
    await lock.create(record);

    const user = join(dir, `nest-leader-${process.getuid!()}`);
    assert.ok(lock.path.startsWith(`${user}/`));
    assert.equal(statSync(user).mode & 0o777, 0o700);
    assert.equal(statSync(join(lock.path, '..')).mode & 0o777, 0o700);
    assert.equal(statSync(lock.path).mode & 0o777, 0o600);
  });

  test('with XDG_RUNTIME_DIR set, the default directory is under it', async () => {
    const runtime = join(dir, 'run-user');
    mkdirSync(runtime, { mode: 0o700 });
    const lock = defaultLock({ TMPDIR: dir, XDG_RUNTIME_DIR: runtime });
    await lock.create(record);

    assert.ok(lock.path.startsWith(join(runtime, 'nest-leader') + '/'));
    assert.equal(statSync(join(runtime, 'nest-leader')).mode & 0o777, 0o700);
  });

  test('a user directory created first by another uid is refused, naming it; nothing is written', async () => {
    const user = join(dir, `nest-leader-${process.getuid!()}`);
    // The other user gets there first: mkdir run as nobody, in the world-writable directory.
    execFileSync('mkdir', ['-m', '0777', user], { uid: OTHER_UID, gid: OTHER_GID });
    assert.equal(statSync(user).uid, OTHER_UID);
    const lock = defaultLock({ TMPDIR: dir });

    await assert.rejects(lock.get(), unsafe('other-owner', user));
    await assert.rejects(lock.create(record), unsafe('other-owner', user));
    await assert.rejects(lock.create(record), /belongs to uid 65534/);
    assert.deepEqual(readdirSync(user), [], 'nothing written into the foreign directory');
  });

  test('an explicit directory owned by another uid, even 0700, is refused', async () => {
    const foreign = join(dir, 'foreign');
    mkdirSync(foreign, { mode: 0o700 });
    chownSync(foreign, OTHER_UID, OTHER_GID);

    await assert.rejects(
      new FileLock({ name: 'jobs', directory: foreign }).update(record, 'v'),
      unsafe('other-owner', foreign),
    );
  });

  test('a directory writable by group or others is refused, with the chmod that fixes it', async () => {
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o775);
    const lock = new FileLock({ name: 'jobs', directory: shared });

    await assert.rejects(lock.get(), unsafe('writable-by-others', shared));
    await assert.rejects(lock.get(), /mode 0775.*chmod 700/);
    chmodSync(shared, 0o755);
    assert.equal(await lock.get(), undefined, 'accepted once fixed');
  });

  test('a directory replaced by a symbolic link is refused; the link target is never touched', async () => {
    const own = join(dir, 'own');
    const lock = new FileLock({ name: 'jobs', directory: own });
    const version = await lock.create(record);
    // Another user's directory, and our directory swapped for a link to it.
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'jobs.lease.json'), readFileSync(lock.path));
    renameSync(own, join(dir, 'moved-away'));
    symlinkSync(elsewhere, own);
    const before = readFileSync(join(elsewhere, 'jobs.lease.json'), 'utf8');

    await assert.rejects(lock.get(), unsafe('symlink', own));
    await assert.rejects(
      lock.update({ ...record, leaseTransitions: 2 }, version),
      unsafe('symlink', own),
    );
    assert.equal(readFileSync(join(elsewhere, 'jobs.lease.json'), 'utf8'), before);
    assert.deepEqual(readdirSync(elsewhere), ['jobs.lease.json'], 'no mutex, no temporary file');
  });

  test('a lease file that is a symbolic link, or a FIFO, is refused without following or blocking', async () => {
    const own = join(dir, 'own');
    mkdirSync(own, { mode: 0o700 });
    const secret = join(dir, 'secret.json');
    writeFileSync(secret, JSON.stringify({ version: 'v', record }));
    const path = join(own, 'jobs.lease.json');
    symlinkSync(secret, path);

    await assert.rejects(new FileLock({ path }).get(), unsafe('symlink', path));

    rmSync(path);
    execFileSync('mkfifo', [path]);
    await assert.rejects(new FileLock({ path }).get(), unsafe('not-a-regular-file', path));
  });

  test('a lease file over 1 MiB reads as no record (not ours), and is replaced by create', async () => {
    const own = join(dir, 'own');
    mkdirSync(own, { mode: 0o700 });
    const path = join(own, 'jobs.lease.json');
    const padding = 'x'.repeat(1024 * 1024);
    writeFileSync(path, JSON.stringify({ version: 'v', record, padding }));
    const lock = new FileLock({ path });

    assert.equal(await lock.get(), undefined);
    await lock.create(record);
    assert.equal((await lock.get())?.record.holderIdentity, 'a');
  });
});

describe('FileLock: a holder hidden by /proc hidepid', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'nest-leader-hidepid-'));
    chmodSync(dir, 0o755);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * What a process of the other user, in a mount namespace whose /proc is mounted
   * `hidepid=invisible`, reads from a copy of `leaseFile` (in a directory of its own).
   */
  function readAsOtherUserUnderHidepid(leaseFile: string): { state: string; detail?: string } {
    const own = join(dir, 'nobody');
    mkdirSync(own, { mode: 0o700 });
    const path = join(own, 'jobs.lease.json');
    writeFileSync(path, readFileSync(leaseFile));
    chownSync(own, OTHER_UID, OTHER_GID);
    chownSync(path, OTHER_UID, OTHER_GID);
    const script = `
      import { FileLock } from 'nest-leader/core';
      const read = await new FileLock({ path: ${JSON.stringify(path)} }).get();
      const liveness = read.holderLiveness;
      console.log(JSON.stringify({ state: liveness.state, detail: liveness.reason ?? liveness.proof }));
    `;
    const run = spawnSync(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount -t proc -o hidepid=invisible proc /proc && exec setpriv --reuid=$0 --regid=$0 ' +
          '--clear-groups "$1" --input-type=module -e "$2"',
        String(OTHER_UID),
        process.execPath,
        script,
      ],
      { cwd, encoding: 'utf8', timeout: 20_000 },
    );
    assert.equal(
      run.status,
      0,
      `${run.stderr}\n(this process runs as uid ${OTHER_UID}: it must be able to read the checkout ` +
        `${cwd} and the Node binary; a checkout in a 0700 directory, such as mktemp -d's, is not)`,
    );
    rmSync(own, { recursive: true, force: true });
    return JSON.parse(run.stdout.trim()) as { state: string; detail?: string };
  }

  test("another user's live holder, missing from /proc, is unknown (kill(pid, 0): EPERM), never gone", async () => {
    // This process (root) is the holder: alive, and invisible to nobody under hidepid.
    const leaseFile = join(dir, 'root.lease.json');
    await new FileLock({ path: leaseFile }).create(record);
    assert.equal(
      JSON.parse(readFileSync(leaseFile, 'utf8')).holderProcess.pid,
      process.pid,
      'the record carries the proof of this process',
    );

    const seen = readAsOtherUserUnderHidepid(leaseFile);

    assert.equal(seen.state, 'unknown');
    assert.match(
      seen.detail!,
      new RegExp(`PID ${process.pid} is not visible in /proc but still runs`),
    );
  });

  test('a holder whose PID no longer exists is still proven gone under hidepid (ESRCH)', async () => {
    const leaseFile = join(dir, 'root.lease.json');
    await new FileLock({ path: leaseFile }).create(record);
    const file = JSON.parse(readFileSync(leaseFile, 'utf8'));
    // A PID that exited: a child that ran and was reaped.
    const exited = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' });
    file.holderProcess.pid = Number(exited.stdout.trim());
    writeFileSync(leaseFile, JSON.stringify(file));
    assert.equal(existsSync(`/proc/${file.holderProcess.pid}`), false);

    const seen = readAsOtherUserUnderHidepid(leaseFile);

    assert.equal(seen.state, 'gone');
    assert.match(seen.detail!, /no longer exists/);
  });
});
