/**
 * CPU cost of `@LeaderOnly()` per call: the same method body plain and gated, on a leader
 * (runs the method inside its term, tracks async work for the drain) and on a follower
 * (the default `'skip'`), sync and async, measured side by side in one process.
 *
 * A call costs nanoseconds, below the timer's resolution, so each tinybench sample is the
 * mean of a batch of calls timed with `process.hrtime` (`overriddenDuration`).
 */
import 'reflect-metadata';
import {
  type DynamicModule,
  Injectable,
  Module,
  type INestApplicationContext,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  LeaderElectionService,
  LeaderModule,
  LeaderOnly,
  type LeaderModuleOptions,
} from 'nest-leader';
import { MemoryLock } from 'nest-leader/testing';
import { Registry } from 'prom-client';
import { Bench, type FnReturnedObject } from 'tinybench';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { writeResults } from './support/results.js';
import { sleep } from './support/sleep.js';
import { median } from './support/stats.js';

/** Calls per tinybench sample. */
const BATCH = 1000;
const LEASE_NAME = 'bench-gate';
const OTHER_LEADER = 'bench-other-replica';

/** The benchmarked methods: one body, plain and gated. */
@Injectable()
export class GateTarget {
  private total = 0;

  plainSync(n: number): number {
    this.total += n;
    return this.total;
  }

  @LeaderOnly()
  gatedSync(n: number): number {
    this.total += n;
    return this.total;
  }

  async plainAsync(n: number): Promise<number> {
    this.total += n;
    return this.total;
  }

  @LeaderOnly()
  async gatedAsync(n: number): Promise<number> {
    this.total += n;
    return this.total;
  }
}

@Module({})
class GateBenchModule {
  static withLock(
    lock: LeaderModuleOptions['lock'],
    identity: string,
    metrics: LeaderModuleOptions['metrics'],
  ): DynamicModule {
    return {
      module: GateBenchModule,
      imports: [LeaderModule.forRoot({ leaseName: LEASE_NAME, lock, identity, metrics })],
      providers: [GateTarget],
    };
  }
}

type Call = (n: number) => unknown;

interface TaskFigures {
  task: string;
  /** Median over repeats of tinybench's median throughput (calls/s). */
  opsPerSecond: number;
  /** Median over repeats of the median time per call, ns. */
  nsPerCall: number;
  /** Per repeat: median ns per call. */
  nsPerCallByRepeat: number[];
}

interface Comparison {
  path: string;
  plain: string;
  gated: string;
  /** Median over repeats of (gated ns / plain ns) within the same repeat. */
  slowdown: number;
  /** Median over repeats of (gated ns − plain ns). */
  overheadNsPerCall: number;
}

export const gateBench: Benchmark = {
  name: 'gate',
  description:
    '@LeaderOnly() CPU cost per call vs a plain method: leader / follower, sync / async, metrics off / on',
  settings: ['timeMs', 'repeats'],
  async run(settings: BenchSettings, command: string): Promise<void> {
    const apps: INestApplicationContext[] = [];
    try {
      // The same pair twice: without metrics, and with `metrics` on (each app its own registry).
      const leaderApp = await createApp('memory', 'bench-leader');
      apps.push(leaderApp);
      const followerApp = await createApp(heldByOther(), 'bench-follower');
      apps.push(followerApp);
      const metricsLeaderApp = await createApp('memory', 'bench-leader-m', new Registry());
      apps.push(metricsLeaderApp);
      const metricsFollowerApp = await createApp(heldByOther(), 'bench-follower-m', new Registry());
      apps.push(metricsFollowerApp);
      const leaderElection = leaderApp.get(LeaderElectionService);
      const followerElection = followerApp.get(LeaderElectionService);
      const metricsLeaderElection = metricsLeaderApp.get(LeaderElectionService);
      const metricsFollowerElection = metricsFollowerApp.get(LeaderElectionService);
      const term = await leaderElection.waitForLeadership({ signal: AbortSignal.timeout(5_000) });
      const metricsTerm = await metricsLeaderElection.waitForLeadership({
        signal: AbortSignal.timeout(5_000),
      });
      await waitForFollower(followerElection);
      await waitForFollower(metricsFollowerElection);
      const leader = leaderApp.get(GateTarget);
      const follower = followerApp.get(GateTarget);
      const metricsLeader = metricsLeaderApp.get(GateTarget);
      const metricsFollower = metricsFollowerApp.get(GateTarget);

      // [name, call, await each call]
      const tasks: [string, Call, boolean][] = [
        ['sync plain', (n) => leader.plainSync(n), false],
        ['sync @LeaderOnly leader', (n) => leader.gatedSync(n), false],
        ['sync @LeaderOnly follower (skip)', (n) => follower.gatedSync(n), false],
        ['async plain', (n) => leader.plainAsync(n), true],
        ['async @LeaderOnly leader', (n) => leader.gatedAsync(n), true],
        ['async @LeaderOnly follower (skip)', (n) => follower.gatedAsync(n), true],
        ['sync @LeaderOnly leader, metrics', (n) => metricsLeader.gatedSync(n), false],
        ['sync @LeaderOnly follower (skip), metrics', (n) => metricsFollower.gatedSync(n), false],
        ['async @LeaderOnly leader, metrics', (n) => metricsLeader.gatedAsync(n), true],
        ['async @LeaderOnly follower (skip), metrics', (n) => metricsFollower.gatedAsync(n), true],
      ];
      const nsByTask = new Map<string, number[]>(tasks.map(([name]) => [name, []]));
      for (let repeat = 1; repeat <= settings.repeats; repeat++) {
        const bench = new Bench({
          name: `gate #${repeat}`,
          time: settings.timeMs,
          warmupTime: 300,
        });
        for (const [name, call, awaitEach] of tasks) {
          bench.add(name, batch(call, awaitEach), { async: true });
        }
        await bench.run();
        for (const task of bench.tasks) {
          const result = task.result;
          if (result.state !== 'completed') {
            throw new Error(`task "${task.name}" ended ${result.state}`, {
              cause: result.state === 'errored' ? result.error : undefined,
            });
          }
          nsByTask.get(task.name)!.push(result.latency.p50 * 1e6);
        }
        process.stdout.write(`  repeat ${repeat}/${settings.repeats} done\n`);
      }

      // The leader figures are only valid if every gated call on the leader took the leader path.
      if (
        term.signal.aborted ||
        leaderElection.term !== term ||
        followerElection.isLeader() ||
        metricsTerm.signal.aborted ||
        metricsLeaderElection.term !== metricsTerm ||
        metricsFollowerElection.isLeader()
      ) {
        throw new Error(
          'leadership changed during the run: the figures mix leader and follower paths',
        );
      }
      const figures: TaskFigures[] = tasks.map(([name]) => {
        const ns = nsByTask.get(name)!;
        return {
          task: name,
          opsPerSecond: Math.round(1e9 / median(ns)),
          nsPerCall: round1(median(ns)),
          nsPerCallByRepeat: ns.map(round1),
        };
      });
      const compare = (path: string, plain: string, gated: string): Comparison => {
        const p = nsByTask.get(plain)!;
        const g = nsByTask.get(gated)!;
        return {
          path,
          plain,
          gated,
          slowdown: round1(median(g.map((ns, i) => ns / p[i]!))),
          overheadNsPerCall: round1(median(g.map((ns, i) => ns - p[i]!))),
        };
      };
      const comparisons = [
        compare('sync, leader', 'sync plain', 'sync @LeaderOnly leader'),
        compare('sync, follower', 'sync plain', 'sync @LeaderOnly follower (skip)'),
        compare('async, leader', 'async plain', 'async @LeaderOnly leader'),
        compare('async, follower', 'async plain', 'async @LeaderOnly follower (skip)'),
        compare('sync, leader, metrics', 'sync plain', 'sync @LeaderOnly leader, metrics'),
        compare(
          'sync, follower, metrics',
          'sync plain',
          'sync @LeaderOnly follower (skip), metrics',
        ),
        compare('async, leader, metrics', 'async plain', 'async @LeaderOnly leader, metrics'),
        compare(
          'async, follower, metrics',
          'async plain',
          'async @LeaderOnly follower (skip), metrics',
        ),
      ];
      // What counting the calls (metrics on) adds to each gated path, within each repeat.
      const metricsCost = [
        'sync @LeaderOnly leader',
        'sync @LeaderOnly follower (skip)',
        'async @LeaderOnly leader',
        'async @LeaderOnly follower (skip)',
      ].map((task) => {
        const off = nsByTask.get(task)!;
        const on = nsByTask.get(`${task}, metrics`)!;
        return {
          task,
          extraNsPerCall: round1(median(on.map((ns, i) => ns - off[i]!))),
          ratio: round1(median(on.map((ns, i) => ns / off[i]!)) * 100) / 100,
        };
      });
      const summary = summarize(figures, comparisons, settings);
      for (const m of metricsCost) {
        summary.push(
          `  metrics on: ${m.task.padEnd(34)} +${m.extraNsPerCall} ns/call (${m.ratio}× metrics off)`,
        );
      }
      const path = writeResults({
        benchmark: 'gate',
        measures:
          'CPU time per call of a @LeaderOnly() method vs the same plain method, on a leader ' +
          'and on a follower (skip), sync and async, in one process',
        command,
        parameters: {
          batchCallsPerSample: BATCH,
          timeMsPerTask: settings.timeMs,
          repeats: settings.repeats,
          locks: { leader: "lock: 'memory'", follower: `MemoryLock held by ${OTHER_LEADER}` },
          metrics: "the '…, metrics' tasks: apps with metrics: { registry } (counts every call)",
          nestLogLevels: ['error', 'warn'],
        },
        results: { tasks: figures, comparisons, metricsCost },
        summary,
      });
      console.log(summary.join('\n'));
      console.log(`  → ${path}`);
    } finally {
      for (const app of apps) await app.close();
    }
  },
};

function createApp(
  lock: LeaderModuleOptions['lock'],
  identity: string,
  registry?: Registry,
): Promise<INestApplicationContext> {
  // The follower path logs at debug level on every skipped call: keep the console quiet
  // (the message is still built, as in production with debug off).
  const metrics = registry ? { registry } : undefined;
  return NestFactory.createApplicationContext(GateBenchModule.withLock(lock, identity, metrics), {
    logger: ['error', 'warn'],
  });
}

/** A MemoryLock whose Lease another replica holds for an hour: this app stays a follower. */
function heldByOther(): MemoryLock {
  const lock = new MemoryLock({ name: LEASE_NAME });
  const now = new Date();
  lock.set({
    holderIdentity: OTHER_LEADER,
    leaseDurationSeconds: 3600,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: 1,
  });
  return lock;
}

async function waitForFollower(election: LeaderElectionService): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (election.leader !== OTHER_LEADER || election.isLeader()) {
    if (performance.now() > deadline) throw new Error('follower app never observed the leader');
    await sleep(10);
  }
}

/** Written, never read: keeps the calls' results alive so the optimizer cannot drop them. */
let _sink = 0;

/**
 * A tinybench task: first a turn of the event loop (untimed), so the elector's renew timer
 * runs — a benchmark that never yields to timers starves it, and past renewDeadline the
 * "leader" steps down and the gated calls silently take the follower path — then `BATCH`
 * calls timed together (each awaited when `awaitEach`).
 */
function batch(call: Call, awaitEach: boolean): () => Promise<FnReturnedObject> {
  return async () => {
    await new Promise((resolve) => setImmediate(resolve));
    let acc = 0;
    const start = process.hrtime.bigint();
    if (awaitEach) {
      for (let i = 0; i < BATCH; i++) acc += ((await call(i)) as number | undefined) ?? 1;
    } else {
      for (let i = 0; i < BATCH; i++) acc += (call(i) as number | undefined) ?? 1;
    }
    const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
    _sink ^= acc;
    return { overriddenDuration: elapsedMs / BATCH, overriddenIterationCost: elapsedMs };
  };
}

function summarize(
  figures: readonly TaskFigures[],
  comparisons: readonly Comparison[],
  settings: BenchSettings,
): string[] {
  const lines = [
    `gate — ns per call (median of ${settings.repeats} repeats × ${settings.timeMs} ms, ` +
      `batches of ${BATCH} calls)`,
  ];
  for (const f of figures) {
    lines.push(
      `  ${f.task.padEnd(43)} ${String(f.nsPerCall).padStart(8)} ns  ` +
        `${f.opsPerSecond.toLocaleString('en-US').padStart(13)} ops/s`,
    );
  }
  for (const c of comparisons) {
    lines.push(
      `  ${c.path.padEnd(25)} @LeaderOnly costs +${c.overheadNsPerCall} ns/call (${c.slowdown}× the plain call)`,
    );
  }
  return lines;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
