/**
 * The schedule ledger in Nest applications: two replicas of one application on a MemoryLock and
 * a ManualClock, a leader-only `@Interval(1000)` job whose ticks the test delivers by calling
 * the method at chosen times (no ScheduleModule: its timers are real). The leader crashes
 * (its Lease is left to expire, as after SIGKILL) before, during or after a slot's run; the
 * other replica takes over and applies the job's catch-up policy.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import {
  type CatchUpSetting,
  currentSlot,
  currentTerm,
  getLeaderElectionToken,
  LeaderElectionService,
  LeaderModule,
  LeaderOnly,
} from 'nest-leader';
import { ManualClock, MemoryLock } from 'nest-leader/testing';
import { type Replica, startReplica } from './support.js';

interface Run {
  replica: string;
  slot: string;
  token: number;
  /** Seconds after the start of the test's clock when the run began. */
  atSeconds: number;
}

const START_MS = new Date('2026-01-01T00:00:00Z').getTime();
const iso = (seconds: number) => new Date(START_MS + seconds * 1000).toISOString();

/** A job class per policy: decorators take constants. */
function jobClass(catchUp: CatchUpSetting | undefined, runs: Run[], clock: ManualClock) {
  @Injectable()
  class Reconciler {
    constructor(private readonly election: LeaderElectionService) {}
    /** A run in progress until this resolves (for crashes during a run). */
    hold: Promise<void> | undefined;
    /** When set, a run waits for its term to end and rejects with the term's reason. */
    untilTermEnds = false;

    @LeaderOnly({ catchUp })
    @Interval(1000)
    async reconcile(): Promise<void> {
      const slot = currentSlot()!;
      assert.equal(slot.token, currentTerm()!.leaseTransitions, 'the slot carries the term token');
      runs.push({
        replica: this.election.identity,
        slot: slot.scheduledAt.toISOString(),
        token: slot.token,
        atSeconds: (clock.wallNow().getTime() - START_MS) / 1000,
      });
      await this.hold;
      if (this.untilTermEnds) {
        const { signal } = currentTerm()!;
        await new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error)),
        );
      }
    }
  }
  return Reconciler;
}

describe('schedule ledger: catch-up across a crash failover (MemoryLock, ManualClock)', () => {
  const apps: Replica[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((r) => r.app.close().catch(() => undefined)));
  });

  async function fleet(catchUp: CatchUpSetting | undefined, releaseOnShutdown = false) {
    const lock = new MemoryLock();
    const clock = new ManualClock({ wallTime: new Date(START_MS) });
    const runs: Run[] = [];
    const Job = jobClass(catchUp, runs, clock);
    const start = async (identity: string, role: 'leader' | 'candidate') => {
      const replica = await startReplica({
        role,
        lock,
        clock,
        providers: [Job],
        leader: { identity, releaseOnShutdown },
      });
      apps.push(replica);
      return { replica, job: replica.app.get(Job) };
    };
    const a = await start('pod-a', 'leader');
    /** Delivers the on-time ticks of slots `from`..`to` to `job`, each 50 ms after its slot. */
    const ticks = async (job: InstanceType<typeof Job>, from: number, to: number) => {
      for (let s = from; s <= to; s++) {
        await advanceTo(s + 0.05);
        await job.reconcile();
      }
    };
    const advanceTo = async (seconds: number) => {
      const ms = START_MS + seconds * 1000 - clock.wallNow().getTime();
      if (ms > 0) await clock.advance(ms);
    };
    /** pod-a's process dies: its Lease stays held until it expires (releaseOnShutdown: false). */
    const crashA = async () => {
      await a.replica.app.close();
    };
    return { a, start, runs, ticks, advanceTo, crashA, clock };
  }

  /** pod-b starts, waits out pod-a's Lease and leads; resolves when its catch-up has run. */
  async function takeOver(f: Awaited<ReturnType<typeof fleet>>) {
    const b = await f.start('pod-b', 'candidate');
    const term = b.replica.election.waitForLeadership();
    for (let i = 0; i < 40 && !b.replica.election.isLeader(); i++) await f.clock.advance(1000);
    await term;
    await f.clock.settle();
    return b;
  }

  const slotsOf = (runs: Run[], replica: string) =>
    runs.filter((r) => r.replica === replica).map((r) => r.slot);

  test("'all', crash after a run: the new leader runs every missed slot, oldest first, and redoes the runs its predecessor's last renewal did not carry", async () => {
    const f = await fleet('all');
    // Renewals every 2 s: the one at 4 s carries slots 1..3; 4 and 5 complete after it.
    await f.ticks(f.a.job, 1, 5);
    await f.advanceTo(5.5);
    await f.crashA();
    const b = await takeOver(f);
    const took = (b.replica.election.term!.acquiredAt.getTime() - START_MS) / 1000;
    const late = slotsOf(f.runs, 'pod-b');
    const expected = [];
    for (let s = 4; s <= Math.floor(took); s++) expected.push(iso(s));
    assert.deepEqual(late, expected, `pod-b took over at ${took} s`);
    assert.ok(
      f.runs
        .filter((r) => r.replica === 'pod-b')
        .every((r) => r.token === b.replica.election.term!.leaseTransitions),
    );
    // Its next tick is on time, and not a slot already run.
    await f.ticks(b.job, Math.floor(took) + 1, Math.floor(took) + 1);
    assert.equal(slotsOf(f.runs, 'pod-b').at(-1), iso(Math.floor(took) + 1));
    assert.equal(
      new Set(slotsOf(f.runs, 'pod-b')).size,
      slotsOf(f.runs, 'pod-b').length,
      'no slot twice on pod-b',
    );
  });

  test("'all', crash during a run: the slot begun and not completed is redone", async () => {
    const f = await fleet('all');
    await f.ticks(f.a.job, 1, 3);
    let release!: () => void;
    f.a.job.hold = new Promise((resolve) => (release = resolve));
    await f.advanceTo(4.05);
    void f.a.job.reconcile(); // slot 4 begins and never completes on pod-a
    await f.advanceTo(6.5); // renewals at 4 s and 6 s carry "slot 4 started, 3 completed"
    f.a.job.hold = undefined;
    const closing = f.crashA();
    release(); // let pod-a's shutdown drain
    await closing;
    await takeOver(f);
    const late = slotsOf(f.runs, 'pod-b');
    assert.equal(late[0], iso(4), 'the unfinished slot is the first one run again');
    assert.ok(late.includes(iso(5)) && late.includes(iso(6)));
  });

  test("'all', graceful handover during a run that stops with its term: the next leader redoes that slot, the release carried the rest", async () => {
    const f = await fleet('all', true);
    await f.ticks(f.a.job, 1, 3);
    f.a.job.untilTermEnds = true;
    await f.advanceTo(4.05);
    const stopped = f.a.job.reconcile().catch((error: Error) => error);
    await f.advanceTo(4.5);
    await f.crashA(); // app.close(): the term ends, the run rejects, the Lease is released
    assert.ok((await stopped) instanceof Error, 'the run stopped with its term');
    const b = await takeOver(f);
    assert.equal(slotsOf(f.runs, 'pod-b')[0], iso(4), 'the stopped slot is run again first');
    assert.ok(!slotsOf(f.runs, 'pod-b').includes(iso(3)), 'slot 3, completed before, is not');
    assert.ok(b.replica.election.term!.acquiredAt.getTime() - START_MS < 6000, 'taken at once');
  });

  test("'all', crash before a tick: nothing run twice that was carried, every later slot run", async () => {
    const f = await fleet('all');
    await f.ticks(f.a.job, 1, 3);
    await f.advanceTo(4.95); // the renewal at 4 s carried slot 3 completed; slot 4 never ticks
    await f.crashA();
    await takeOver(f);
    const late = slotsOf(f.runs, 'pod-b');
    assert.equal(late[0], iso(4));
    assert.ok(!late.includes(iso(3)), 'slot 3 was carried by a renewal: not run again');
  });

  test("'once': the newest missed slot runs once, however many were missed", async () => {
    const f = await fleet('once');
    await f.ticks(f.a.job, 1, 4);
    await f.advanceTo(4.95);
    await f.crashA();
    const b = await takeOver(f);
    const took = Math.floor((b.replica.election.term!.acquiredAt.getTime() - START_MS) / 1000);
    assert.deepEqual(slotsOf(f.runs, 'pod-b'), [iso(took)]);
  });

  test("'skip' (the default): no missed slot runs late", async () => {
    const f = await fleet(undefined);
    await f.ticks(f.a.job, 1, 4);
    await f.advanceTo(4.95);
    await f.crashA();
    const b = await takeOver(f);
    assert.deepEqual(slotsOf(f.runs, 'pod-b'), []);
    const took = Math.floor((f.clock.wallNow().getTime() - START_MS) / 1000);
    await f.ticks(b.job, took + 1, took + 1);
    assert.deepEqual(slotsOf(f.runs, 'pod-b'), [iso(took + 1)], 'on-time ticks run as before');
  });

  /** pod-a crashes before a tick (slot 4 never ticks), during slot 4's run, or after it. */
  const phases = {
    before: async (f: Awaited<ReturnType<typeof fleet>>) => {
      await f.ticks(f.a.job, 1, 3);
      await f.advanceTo(4.95);
    },
    during: async (f: Awaited<ReturnType<typeof fleet>>) => {
      await f.ticks(f.a.job, 1, 3);
      f.a.job.hold = new Promise(() => undefined); // never completes on pod-a
      await f.advanceTo(4.05);
      void f.a.job.reconcile();
      await f.advanceTo(4.95);
      f.a.job.hold = undefined;
    },
    after: async (f: Awaited<ReturnType<typeof fleet>>) => {
      await f.ticks(f.a.job, 1, 4);
      await f.advanceTo(4.95);
    },
  };
  for (const [phase, crashAt] of Object.entries(phases)) {
    test(`'once' and 'skip', crash ${phase} slot 4's run: once runs only the newest missed slot, skip none`, async () => {
      for (const policy of ['once', 'skip'] as const) {
        const f = await fleet(policy);
        await crashAt(f);
        void f.crashA(); // during a run: its drain holds the Lease until shutdownGraceMs
        const b = await takeOver(f);
        const took = Math.floor((b.replica.election.term!.acquiredAt.getTime() - START_MS) / 1000);
        assert.deepEqual(
          slotsOf(f.runs, 'pod-b'),
          policy === 'once' ? [iso(took)] : [],
          `${policy}, crash ${phase}`,
        );
        await Promise.all(apps.splice(0).map((r) => r.app.close().catch(() => undefined)));
      }
    });
  }

  test('a slot older than the horizon is never run late', async () => {
    const f = await fleet({ policy: 'all', horizonMs: 5000 });
    await f.ticks(f.a.job, 1, 4);
    await f.advanceTo(4.95);
    await f.crashA();
    const b = await takeOver(f);
    const tookMs = b.replica.election.term!.acquiredAt.getTime() - START_MS;
    const late = slotsOf(f.runs, 'pod-b').map((slot) => new Date(slot).getTime() - START_MS);
    assert.ok(late.length > 0 && late.length <= 6, `only the last 5 s: ${late}`);
    assert.ok(
      late.every((ms) => ms >= tookMs - 5000),
      'none older than the horizon',
    );
  });

  test('on one leader, slots its timer never ticked for are caught up at the next tick', async () => {
    const f = await fleet('all');
    await f.ticks(f.a.job, 1, 2);
    await f.ticks(f.a.job, 6, 6); // the timer skipped 3, 4 and 5 (a busy event loop)
    await f.clock.settle();
    const runs = slotsOf(f.runs, 'pod-a');
    assert.deepEqual([...runs].sort(), [1, 2, 3, 4, 5, 6].map(iso), 'every slot once');
    assert.deepEqual(
      runs.filter((slot) => slot !== iso(6)),
      [1, 2, 3, 4, 5].map(iso),
      'the skipped ones oldest first',
    );
  });

  test('a second tick for a slot already run in the term does not run it again', async () => {
    const f = await fleet('all');
    await f.ticks(f.a.job, 1, 1);
    await f.a.job.reconcile(); // the same slot again, 50 ms after it
    assert.deepEqual(slotsOf(f.runs, 'pod-a'), [iso(1)]);
  });
});

describe('@LeaderOnly({ catchUp }): bad settings fail when the class is declared', () => {
  test('an unknown policy names the option and the rule', () => {
    assert.throws(
      () => LeaderOnly({ catchUp: 'always' as never }),
      /catchUp.*must be 'skip', 'once' or 'all'/,
    );
  });

  test('a horizon that is not a positive whole number of milliseconds is refused', () => {
    assert.throws(
      () => LeaderOnly({ catchUp: { policy: 'all', horizonMs: -1 } }),
      /catchUp\.horizonMs.*whole number of milliseconds > 0/,
    );
  });

  test("a named election's job, @Interval above @LeaderOnly: its slots and catch-up are the named election's", async () => {
    const slots: { job: string; token: number }[] = [];
    @Injectable()
    class ShardSweeper {
      @Interval('sweep-shard', 1000)
      @LeaderOnly({ election: 'shard-a', catchUp: 'all' })
      sweep(): void {
        const slot = currentSlot('shard-a')!;
        assert.equal(currentSlot(), undefined, 'not a slot of the default election');
        slots.push({ job: slot.job, token: slot.token });
      }
    }
    const clock = new ManualClock({ wallTime: new Date(START_MS + 1_050) });
    const shardLock = new MemoryLock({ name: 'shard' });
    const replica = await startReplica({
      role: 'leader',
      clock,
      providers: [ShardSweeper],
      imports: [
        LeaderModule.registerElection({
          name: 'shard-a',
          leaseName: 'shard',
          lock: shardLock,
          clock,
        }),
      ],
    });
    try {
      const shard = replica.app.get<LeaderElectionService>(getLeaderElectionToken('shard-a'));
      await shard.waitForLeadership();
      replica.app.get(ShardSweeper).sweep();
      assert.deepEqual(slots, [{ job: 'sweep-shard', token: shard.term!.leaseTransitions }]);
      await clock.advance(2000); // a renewal of the shard Lease carries its ledger
      assert.match(shardLock.read()?.record.scheduleLedger ?? '', /sweep-shard/);
    } finally {
      await replica.app.close();
    }
  });

  test('a cron job is recognised too (the ledger reads its slots through the cron package)', async () => {
    const runs: string[] = [];
    @Injectable()
    class Nightly {
      @LeaderOnly({ catchUp: 'once' })
      @Cron('0 0 2 * * *', { timeZone: 'UTC' })
      close(): void {
        runs.push(currentSlot()!.scheduledAt.toISOString());
      }
    }
    const clock = new ManualClock({ wallTime: new Date('2026-03-01T02:00:00.040Z') });
    const replica = await startReplica({ role: 'leader', clock, providers: [Nightly] });
    try {
      replica.app.get(Nightly).close();
      assert.deepEqual(runs, ['2026-03-01T02:00:00.000Z']);
    } finally {
      await replica.app.close();
    }
  });
});
