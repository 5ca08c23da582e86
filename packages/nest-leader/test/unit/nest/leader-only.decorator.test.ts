import './support.js';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  currentTerm,
  type LeaderTerm,
  LeaderModuleNotImportedError,
  LeaderModuleUsageError,
  LeaderOnly,
  OnLeadershipAcquired,
} from 'nest-leader';
import { type Replica, startReplica } from './support.js';

class Boom extends Error {}

@Injectable()
class Ledger {
  readonly entries: string[] = [];
  readonly terms: (LeaderTerm | undefined)[] = [];

  @LeaderOnly()
  append(entry: string, times: number): number {
    for (let i = 0; i < times; i++) this.entries.push(entry);
    this.terms.push(currentTerm());
    return this.entries.length;
  }

  @LeaderOnly()
  async appendLater(entry: string): Promise<number> {
    await Promise.resolve();
    this.entries.push(entry);
    this.terms.push(currentTerm());
    return this.entries.length;
  }

  /** A leader-only method calling another of the same election, before and after an await. */
  @LeaderOnly()
  async appendTwiceNested(entry: string): Promise<number> {
    this.append(entry, 1);
    await Promise.resolve();
    this.terms.push(currentTerm());
    return this.appendLater(entry);
  }

  @LeaderOnly()
  fail(error: Error): never {
    throw error;
  }

  @LeaderOnly()
  async failLater(error: Error): Promise<never> {
    throw error;
  }
}

@LeaderOnly()
@Injectable()
class SingletonWorker implements OnModuleInit {
  readonly ran: string[] = [];

  onModuleInit(): void {
    this.ran.push('onModuleInit');
  }

  @OnLeadershipAcquired()
  acquired(): void {
    this.ran.push('acquired');
  }

  poll(): void {
    this.ran.push('poll');
  }

  async flush(): Promise<void> {
    this.ran.push('flush');
  }
}

describe('@LeaderOnly() on the leader', () => {
  let leader: Replica;
  let ledger: Ledger;
  before(async () => {
    leader = await startReplica({ role: 'leader', providers: [Ledger] });
    ledger = leader.app.get(Ledger);
  });
  after(() => leader.app.close());

  test('runs a sync method with its this and arguments, and returns its value', () => {
    const before = ledger.entries.length;
    assert.equal(ledger.append('a', 2), before + 2);
    assert.deepEqual(ledger.entries.slice(before), ['a', 'a']);
  });

  test('runs an async method and resolves its value', async () => {
    const before = ledger.entries.length;
    assert.equal(await ledger.appendLater('b'), before + 1);
  });

  test('lets a sync error through unchanged', () => {
    const error = new Boom('sync');
    assert.throws(
      () => ledger.fail(error),
      (thrown) => thrown === error,
    );
  });

  test('lets an async rejection through unchanged', async () => {
    const error = new Boom('async');
    await assert.rejects(ledger.failLater(error), (thrown) => thrown === error);
  });

  test('keeps the name and length of the original method', () => {
    assert.equal(ledger.append.name, 'append');
    assert.equal(ledger.append.length, 2);
    assert.equal(ledger.appendLater.name, 'appendLater');
  });

  test('keeps design-time metadata stored by property key', () => {
    assert.deepEqual(Reflect.getMetadata('design:paramtypes', Ledger.prototype, 'append'), [
      String,
      Number,
    ]);
  });

  test('currentTerm() is the running term inside the method, across awaits, and undefined outside', async () => {
    ledger.append('c', 1);
    await ledger.appendLater('d');
    assert.equal(ledger.terms.at(-2), leader.election.term);
    assert.equal(ledger.terms.at(-1), leader.election.term);
    assert.equal(currentTerm(), undefined);
  });

  test('currentTerm() stays the running term in a leader-only call nested in another of the same election', async () => {
    const before = ledger.entries.length;
    assert.equal(await ledger.appendTwiceNested('n'), before + 2);
    assert.deepEqual(ledger.terms.slice(-3), [
      leader.election.term,
      leader.election.term,
      leader.election.term,
    ]);
    assert.ok(leader.election.term);
    assert.equal(currentTerm(), undefined);
  });

  test('skips the method once the renew deadline passed, even if no timer could run (paused process)', () => {
    const before = ledger.entries.length;
    leader.clock.jump(10_000); // renewDeadlineSeconds elapsed while "paused"
    assert.equal(ledger.append('late', 1), undefined);
    assert.equal(ledger.entries.length, before);
    assert.equal(leader.election.isLeader(), false);
  });
});

describe('@LeaderOnly() on a class', () => {
  test('gates every method but leaves lifecycle hooks and leadership handlers alone', async () => {
    const follower = await startReplica({ role: 'follower', providers: [SingletonWorker] });
    try {
      const worker = follower.app.get(SingletonWorker);
      worker.poll();
      await worker.flush();
      assert.deepEqual(worker.ran, ['onModuleInit']);

      await follower.clock.advance(20_000); // the other holder's Lease expired: we took over
      assert.ok(follower.election.isLeader());
      worker.poll();
      assert.deepEqual(worker.ran, ['onModuleInit', 'acquired', 'poll']);
    } finally {
      await follower.app.close();
    }
  });
});

describe('@LeaderOnly() misused', () => {
  test('on an accessor: a LeaderModuleUsageError naming the member, when the class is declared', () => {
    assert.throws(
      () => {
        class Account {
          @LeaderOnly()
          get balance(): number {
            return 0;
          }
        }
        return Account;
      },
      (error) =>
        error instanceof LeaderModuleUsageError &&
        error.message === '@LeaderOnly() applies to methods and classes, not to "balance".',
    );
  });
});

describe('@LeaderOnly() without LeaderModule', () => {
  test('the application fails at bootstrap with LeaderModuleNotImportedError naming the method', async () => {
    const moduleRef = await Test.createTestingModule({ providers: [Ledger] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await assert.rejects(
        app.init(),
        (error) =>
          error instanceof LeaderModuleNotImportedError &&
          error.className === 'Ledger' &&
          error.methodName === 'append' &&
          /import LeaderModule\.forRoot\(\)/.test(error.message),
      );
      assert.deepEqual(app.get(Ledger).entries, []);
    } finally {
      await app.close();
    }
  });

  test('fails at the first call on an instance created with new', async () => {
    const ledger = new Ledger();
    assert.throws(() => ledger.append('x', 1), LeaderModuleNotImportedError);
    await assert.rejects(ledger.appendLater('x'), LeaderModuleNotImportedError);
    assert.deepEqual(ledger.entries, []);
  });

  test("the class's own and inherited onApplicationBootstrap still run when LeaderModule is imported", async () => {
    class Base {
      readonly ran: string[] = [];
      onApplicationBootstrap(): void {
        this.ran.push('base');
      }
    }
    @Injectable()
    class Inherits extends Base {
      @LeaderOnly()
      work(): void {}
    }
    @Injectable()
    class Owns {
      readonly ran: string[] = [];
      @LeaderOnly()
      work(): void {}
      onApplicationBootstrap(): void {
        this.ran.push('own');
      }
    }
    const replica = await startReplica({ role: 'follower', providers: [Inherits, Owns] });
    try {
      assert.deepEqual(replica.app.get(Inherits).ran, ['base']);
      assert.deepEqual(replica.app.get(Owns).ran, ['own']);
    } finally {
      await replica.app.close();
    }
  });
});

describe('waitForLeadership()', () => {
  test('resolves with the term once a follower takes over', async () => {
    const follower = await startReplica({ role: 'follower' });
    try {
      const waiting = follower.election.waitForLeadership();
      await follower.clock.advance(20_000); // leaseDuration + the longest acquire retry
      const term = await waiting;
      assert.equal(term, follower.election.term);
      assert.equal(term.leaseTransitions, 1);
    } finally {
      await follower.app.close();
    }
  });

  test('rejects with the reason of its abort signal', async () => {
    const follower = await startReplica({ role: 'follower' });
    try {
      const controller = new AbortController();
      const waiting = follower.election.waitForLeadership({ signal: controller.signal });
      controller.abort(new Boom('gave up'));
      await assert.rejects(waiting, Boom);
    } finally {
      await follower.app.close();
    }
  });
});
