import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError, LockConflictError, SidecarLockError } from 'nest-leader';
import { SidecarLock } from 'nest-leader/core';

/** A stand-in for the sidecar's GET /ready, answering whatever `state` says. */
let state: { status: number; leader: boolean; name: string; leaseTransitions: number | null };
let server: Server;
let url: string;

before(async () => {
  server = createServer((_req, res) => {
    res.writeHead(state.status, { 'content-type': 'application/json' });
    const { status: _status, ...body } = state;
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const record = (holderIdentity: string, leaseTransitions: number) => ({
  holderIdentity,
  leaseDurationSeconds: 2,
  leaseTransitions,
});

describe('SidecarLock: the elector follows the sidecar in its pod', () => {
  test("a leading sidecar's new term reads as free at token − 1; the update naming its token is accepted", async () => {
    const lock = new SidecarLock({ url });
    state = { status: 200, leader: true, name: 'pod-1', leaseTransitions: 5 };
    const read = await lock.get();
    assert.equal(read?.record.holderIdentity, '');
    assert.equal(read?.record.leaseTransitions, 4);
    await lock.update(record('pod-1', 5), read!.version);
    const again = await lock.get();
    assert.deepEqual([again?.record.holderIdentity, again?.record.leaseTransitions], ['pod-1', 5]);
  });

  test("the sidecar's first term (token 0) reads as no record; create with 0 is accepted", async () => {
    const lock = new SidecarLock({ url });
    state = { status: 200, leader: true, name: 'pod-1', leaseTransitions: 0 };
    assert.equal(await lock.get(), undefined);
    await lock.create(record('pod-1', 0));
  });

  test('renewing after the sidecar lost, or re-acquired in another term, is a conflict', async () => {
    const lock = new SidecarLock({ url });
    state = { status: 200, leader: true, name: 'pod-1', leaseTransitions: 3 };
    await lock.update(record('pod-1', 3), '1');
    state = { status: 200, leader: true, name: 'pod-1', leaseTransitions: 4 };
    await assert.rejects(lock.update(record('pod-1', 3), '2'), LockConflictError);
    state = { status: 503, leader: false, name: 'pod-2', leaseTransitions: 4 };
    await assert.rejects(lock.update(record('pod-1', 4), '3'), LockConflictError);
  });

  test('a follower sidecar: the holder it observes, never our own identity', async () => {
    const lock = new SidecarLock({ url });
    state = { status: 200, leader: true, name: 'pod-1', leaseTransitions: 3 };
    await lock.update(record('pod-1', 3), '1');
    state = { status: 503, leader: false, name: 'pod-1', leaseTransitions: 3 }; // term ended, Lease not yet taken
    assert.equal((await lock.get())?.record.holderIdentity, '');
    state = { status: 503, leader: false, name: 'pod-2', leaseTransitions: 4 };
    assert.equal((await lock.get())?.record.holderIdentity, 'pod-2');
  });

  test('a follower sidecar that has not read its Lease yet: get rejects instead of inventing a record', async () => {
    const lock = new SidecarLock({ url });
    state = { status: 503, leader: false, name: '', leaseTransitions: null };
    await assert.rejects(lock.get(), /has not read its Lease yet/);
  });

  test('release (empty holder) asks nothing: only the sidecar can release its Lease', async () => {
    const lock = new SidecarLock({ url });
    state = { status: 500, leader: false, name: '', leaseTransitions: null };
    await lock.update(record('', 3), '1');
  });

  test('an answer that is not the sidecar JSON, or no answer, rejects naming the URL', async () => {
    const lock = new SidecarLock({ url });
    state = { status: 404, leader: false, name: '', leaseTransitions: null };
    await assert.rejects(lock.get(), /answered HTTP 404/);
    const gone = new SidecarLock({ url: 'http://127.0.0.1:1' });
    await assert.rejects(gone.get(), /did not answer GET http:\/\/127\.0\.0\.1:1\/ready/);
  });

  test('each failure to learn the leader is a SidecarLockError naming the URL and why', async () => {
    const isSidecarLockError = (reason: string, readyUrl: string) => (e: unknown) =>
      e instanceof SidecarLockError && e.reason === reason && e.url === readyUrl;
    const lock = new SidecarLock({ url });
    state = { status: 503, leader: false, name: '', leaseTransitions: null };
    await assert.rejects(lock.get(), isSidecarLockError('not-ready', `${url}/ready`));
    state = { status: 404, leader: false, name: '', leaseTransitions: null };
    await assert.rejects(lock.get(), isSidecarLockError('unexpected', `${url}/ready`));
    const gone = new SidecarLock({ url: 'http://127.0.0.1:1' });
    await assert.rejects(gone.get(), isSidecarLockError('unreachable', 'http://127.0.0.1:1/ready'));
  });

  test('a URL that is not http(s) is an InvalidLeaderElectionOptionError naming lock.sidecar', () => {
    for (const bad of ['localhost:4040', 'ftp://x', '']) {
      assert.throws(
        () => new SidecarLock({ url: bad }),
        (e: unknown) =>
          e instanceof InvalidLeaderElectionOptionError && e.option === 'lock.sidecar',
      );
    }
  });
});
