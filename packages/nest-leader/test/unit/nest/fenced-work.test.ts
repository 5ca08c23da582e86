import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { Injectable } from '@nestjs/common';
import { currentTerm, LeaderOnly, LeadershipLostDuringWorkError } from 'nest-leader';
import { deferred, holdLeaseAs, OTHER, type Replica, startReplica } from './support.js';

/** Work whose end the test controls, and what it saw. */
@Injectable()
class CriticalWork {
  release = deferred();
  runs: number[] = [];

  @LeaderOnly({ verify: 'before' })
  async checked(): Promise<string> {
    this.runs.push(currentTerm()!.leaseTransitions);
    return 'done';
  }

  @LeaderOnly({ verify: 'before-and-after' })
  async fenced(): Promise<string> {
    this.runs.push(currentTerm()!.leaseTransitions);
    await this.release.promise;
    return 'committed';
  }

  @LeaderOnly({ verify: 'before', onFollower: 'throw' })
  async strict(): Promise<string> {
    return 'ran';
  }
}

/** Writes another holder into the lock behind the elector's back (it has not noticed yet). */
function takeOverBehindItsBack(replica: Replica, leaseTransitions: number): void {
  holdLeaseAs(replica.lock, replica.clock, OTHER, leaseTransitions);
}

describe('fenced work: verifyLeadership() and @LeaderOnly({ verify })', () => {
  let replica: Replica | undefined;
  afterEach(async () => {
    await replica?.app.close();
    replica = undefined;
  });

  test('verifyLeadership: true on the leader, reading the lock without writing it', async () => {
    replica = await startReplica({ role: 'leader' });
    const before = replica.lock.writes.length;
    assert.equal(await replica.election.verifyLeadership(), true);
    assert.equal(replica.lock.writes.length, before, 'a read, no write');
  });

  test('verifyLeadership: false when the stored Lease names another holder, though isLeader() still says true', async () => {
    replica = await startReplica({ role: 'leader' });
    const token = replica.election.term!.leaseTransitions;
    takeOverBehindItsBack(replica, token + 1);
    assert.equal(replica.election.isLeader(), true, 'the local view has not noticed');
    assert.equal(await replica.election.verifyLeadership(), false);
  });

  test('verifyLeadership: false when the read fails, and on a follower', async () => {
    replica = await startReplica({ role: 'leader' });
    replica.lock.failNext('get');
    assert.equal(await replica.election.verifyLeadership(), false);
    await replica.app.close();
    replica = await startReplica({ role: 'follower' });
    assert.equal(await replica.election.verifyLeadership(), false);
  });

  test("verify 'before': runs after a successful verification, under the term", async () => {
    replica = await startReplica({ role: 'leader', providers: [CriticalWork] });
    const work = replica.app.get(CriticalWork);
    assert.equal(await work.checked(), 'done');
    assert.deepEqual(work.runs, [replica.election.term!.leaseTransitions]);
  });

  test("verify 'before': a failed verification is a follower call (skip, or throw when asked)", async () => {
    replica = await startReplica({ role: 'leader', providers: [CriticalWork] });
    const work = replica.app.get(CriticalWork);
    takeOverBehindItsBack(replica, replica.election.term!.leaseTransitions + 1);
    assert.equal(await work.checked(), undefined);
    assert.deepEqual(work.runs, [], 'not run');
    await assert.rejects(work.strict(), { name: 'NotLeaderException' });
  });

  test("verify 'before-and-after': the Lease lost during the work → result withheld, LeadershipLostDuringWorkError with the term's token", async () => {
    replica = await startReplica({ role: 'leader', providers: [CriticalWork] });
    const work = replica.app.get(CriticalWork);
    const token = replica.election.term!.leaseTransitions;
    const call = work.fenced();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(work.runs, [token], 'started after the first verification');
    takeOverBehindItsBack(replica, token + 1);
    work.release.resolve();
    await assert.rejects(call, (error: unknown) => {
      assert.ok(error instanceof LeadershipLostDuringWorkError);
      assert.equal(error.leaseTransitions, token);
      assert.equal(error.methodName, 'fenced');
      assert.equal(error.election, 'default');
      return true;
    });
  });

  test("verify 'before-and-after': the result when the Lease is still held after the work", async () => {
    replica = await startReplica({ role: 'leader', providers: [CriticalWork] });
    const work = replica.app.get(CriticalWork);
    const call = work.fenced();
    work.release.resolve();
    assert.equal(await call, 'committed');
  });

  test("verify 'before-and-after': a graceful shutdown during the work is not a loss (the Lease is held while work drains)", async () => {
    replica = await startReplica({ role: 'leader', providers: [CriticalWork] });
    const work = replica.app.get(CriticalWork);
    const call = work.fenced();
    await new Promise((r) => setImmediate(r));
    const closing = replica.app.close();
    await new Promise((r) => setImmediate(r));
    assert.equal(replica.election.isLeader(), false, 'the term ended for new work');
    work.release.resolve();
    assert.equal(await call, 'committed');
    await closing;
    replica = undefined;
  });

  test('an unknown verify value fails when the class is decorated, naming verify', () => {
    assert.throws(
      () => LeaderOnly({ verify: 'always' as never }),
      (error: unknown) => (error as { option?: string }).option === 'verify',
    );
  });
});
