/**
 * A set of demo replicas competing for one Lease, as the launcher and the end-to-end tests run
 * them: start, find the leader, kill it and measure the failover, read the merged work log,
 * stop everything. Framework-free.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type DemoEvent,
  type LeaderWorkEvent,
  type LeadershipAcquiredEvent,
  type ShardWorkEvent,
} from '../demo-events.js';
import {
  type ExitStatus,
  type ReceivedEvent,
  ReplicaProcess,
  type ReplicaOptions,
  waitForEventFrom,
} from './replica-process.js';

/** Options of a {@link ReplicaFleet}. */
export interface FleetOptions {
  /** Identity of replica `i` (0-based). Default `demo-${i + 1}`. */
  identity?: (index: number) => string;
  /** Port of replica `i`; 0 = a free port. Default 0. */
  port?: (index: number) => number;
  /** Environment of every replica (timings, lock, kubeconfig…). */
  env?: Record<string, string | undefined>;
  /** Base environment; default `process.env`. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Per-replica stdout/stderr log files go here when set. */
  logDir?: string;
  /** How long a replica may take to start listening, ms. Default 30 s. */
  startTimeoutMs?: number;
}

/** One measured failover: the leader got `signal`, another replica took over. */
export interface FailoverMeasurement {
  signal: NodeJS.Signals;
  /** The old leader. */
  from: string;
  /** The new leader. */
  to: string;
  /** From sending the signal to the new leader's `leadership-acquired` line, ms. */
  acquiredMs: number;
  /** From sending the signal to the new leader's first `leader-work` line, ms. */
  firstWorkMs: number;
  /** `leaseTransitions` of the old and the new term. */
  previousLeaseTransitions: number;
  leaseTransitions: number;
  /** How the old leader exited. */
  exit: ExitStatus;
}

const isAcquired = (e: DemoEvent): e is LeadershipAcquiredEvent =>
  e.event === 'leadership-acquired';

/** Replicas of the demo, one slot per replica; a restarted slot gets a new process. */
export class ReplicaFleet {
  /** The current process of each slot. */
  readonly replicas: ReplicaProcess[] = [];
  /** Every process ever started, including exited ones. */
  readonly history: ReplicaProcess[] = [];

  constructor(private readonly options: FleetOptions = {}) {}

  /** Starts `count` replicas and waits until all listen. */
  async start(count: number): Promise<void> {
    for (let i = 0; i < count; i++) this.spawn(i);
    await Promise.all(this.replicas.map((r) => r.started(this.options.startTimeoutMs)));
  }

  /** (Re)starts slot `index` with a new process (same identity and port) and waits until it listens. */
  async restart(index: number): Promise<ReplicaProcess> {
    const replica = this.spawn(index);
    await replica.started(this.options.startTimeoutMs);
    return replica;
  }

  private spawn(index: number): ReplicaProcess {
    const previous = this.replicas[index];
    const options: ReplicaOptions = {
      identity: this.options.identity?.(index) ?? `demo-${index + 1}`,
      // A restarted slot keeps its port, as a restarted container keeps its pod's.
      port: previous?.port ?? this.options.port?.(index) ?? 0,
      env: this.options.env,
      baseEnv: this.options.baseEnv,
      logDir: this.options.logDir,
    };
    const replica = ReplicaProcess.start(options);
    this.replicas[index] = replica;
    this.history.push(replica);
    return replica;
  }

  /** The running replicas. */
  get running(): ReplicaProcess[] {
    return this.replicas.filter((r) => r.running);
  }

  /** Every event from every process ever started, in arrival order. */
  events(): ReceivedEvent[] {
    return this.history.flatMap((r) => r.events).sort((a, b) => a.receivedAt - b.receivedAt);
  }

  /** Every `leader-work` line from every process ever started, in arrival order. */
  leaderWork(): LeaderWorkEvent[] {
    return this.events()
      .map((r) => r.event)
      .filter((e): e is LeaderWorkEvent => e.event === 'leader-work');
  }

  /** Every `shard-work` line (the sharded election `orders`) from every process, in arrival order. */
  shardWork(): ShardWorkEvent[] {
    return this.events()
      .map((r) => r.event)
      .filter((e): e is ShardWorkEvent => e.event === 'shard-work');
  }

  /**
   * The running replica that leads according to its own events: its last
   * `leadership-acquired` is not followed by a `leadership-lost`.
   */
  leader(): { replica: ReplicaProcess; leaseTransitions: number } | undefined {
    for (const replica of this.running) {
      const last = [...replica.events]
        .reverse()
        .find(
          (r) => r.event.event === 'leadership-acquired' || r.event.event === 'leadership-lost',
        );
      if (last && isAcquired(last.event)) {
        return { replica, leaseTransitions: last.event.leaseTransitions };
      }
    }
    return undefined;
  }

  /** The first event, from any process of the fleet, at or after `since` that matches. */
  waitForEvent(
    predicate: (event: DemoEvent, replica: ReplicaProcess) => boolean,
    options: { timeoutMs: number; since?: number; description?: string },
  ): Promise<ReceivedEvent> {
    return waitForEventFrom(this.history, predicate, options);
  }

  /**
   * Waits for a leader: the first `leadership-acquired` at or after `since`.
   * @throws Error after `timeoutMs`.
   */
  async waitForLeader(
    options: { timeoutMs: number; since?: number } = { timeoutMs: 30_000 },
  ): Promise<ReceivedEvent<LeadershipAcquiredEvent>> {
    const current = this.leader();
    if (current && options.since === undefined) {
      const event = [...current.replica.events].reverse().find((r) => isAcquired(r.event))!;
      return event as ReceivedEvent<LeadershipAcquiredEvent>;
    }
    return (await this.waitForEvent(isAcquired, {
      ...options,
      description: 'a leader',
    })) as ReceivedEvent<LeadershipAcquiredEvent>;
  }

  /**
   * Sends `signal` to the current leader and measures how long until another replica
   * acquires the Lease and does its first leader-only work.
   * @throws Error if there is no leader, or no other replica takes over within `timeoutMs`.
   */
  async failover(signal: NodeJS.Signals, timeoutMs: number): Promise<FailoverMeasurement> {
    const current = this.leader();
    if (!current) throw new Error('no leader to fail over from');
    const from = current.replica;
    const sentAt = from.kill(signal);
    const acquired = (await this.waitForEvent((e, replica) => isAcquired(e) && replica !== from, {
      timeoutMs,
      since: sentAt,
      description: `a new leader after ${signal} to ${from.identity}`,
    })) as ReceivedEvent<LeadershipAcquiredEvent>;
    const remainingMs = Math.max(1, timeoutMs - (performance.now() - sentAt));
    const firstWork = await this.waitForEvent(
      (e, replica) =>
        e.event === 'leader-work' &&
        replica === acquired.replica &&
        e.leaseTransitions === acquired.event.leaseTransitions,
      {
        timeoutMs: remainingMs,
        since: sentAt,
        description: `leader-work from ${acquired.event.identity}`,
      },
    );
    const exitTimeout = new AbortController();
    const exit = await Promise.race([
      from.exited,
      sleep(remainingMs, undefined, { signal: exitTimeout.signal }).then(() => {
        throw new Error(
          `timed out after ${remainingMs} ms waiting for ${from.identity} to exit after ${signal}`,
        );
      }),
    ]).finally(() => exitTimeout.abort());
    return {
      signal,
      from: from.identity,
      to: acquired.event.identity,
      acquiredMs: acquired.receivedAt - sentAt,
      firstWorkMs: firstWork.receivedAt - sentAt,
      previousLeaseTransitions: current.leaseTransitions,
      leaseTransitions: acquired.event.leaseTransitions,
      exit,
    };
  }

  /**
   * Waits until every running replica reported `shutdown-started`, at most `timeoutMs`.
   * @returns whether they all did.
   */
  async shuttingDown(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while (!this.running.every((r) => r.shuttingDown)) {
      if (performance.now() >= deadline) return false;
      await sleep(20);
    }
    return true;
  }

  /** Stops every running replica gracefully (SIGTERM, all at once), SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 20_000): Promise<ExitStatus[]> {
    return Promise.all(this.running.map((r) => r.stop(timeoutMs)));
  }

  /** SIGKILLs every process still running: for `after` hooks and emergency exits. */
  kill(): void {
    for (const replica of this.history) replica.kill('SIGKILL');
  }
}
