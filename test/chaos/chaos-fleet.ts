/**
 * The replicas of a chaos run: demo processes in slots, each slot reaching the API server
 * through its own link (proxy). Tracks what the invariant checker needs from outside the
 * processes: wall-clock spawn and exit times, which exits the harness caused, which processes
 * are paused. Framework-free.
 */
import { join } from 'node:path';
import type { LeaderStatus } from '@nest-leader/demo/demo-events';
import { ReplicaProcess } from '@nest-leader/demo/launcher/replica-process';
import type { ProcessExit, ProcessLog } from './invariant-checker.js';

/** One process the fleet started. */
export interface FleetProcess {
  instance: string;
  slot: number;
  identity: string;
  replica: ReplicaProcess;
  spawnedAt: number;
  stoppingAt?: number;
  /** Set when the harness killed it (or stopped it at the end). */
  expectedExit: boolean;
  exit?: ProcessExit;
  /** Resolves with the exit once it happened (wall-clock ms). */
  exited: Promise<ProcessExit>;
  /** SIGSTOPped or event-loop-blocked until this wall-clock time (ms); 0 when not. */
  unresponsiveUntil: number;
}

export interface ChaosFleetOptions {
  /** Regular slots (each with its identity `chaos-<i+1>`). */
  replicas: number;
  /** Kubeconfig of slot i (slot `replicas` is the duplicate-identity slot). */
  kubeconfigPath: (slot: number) => string;
  /** Environment of every replica (timings, lease, namespace…). */
  env: Record<string, string | undefined>;
  /** Per-process stdout/stderr logs go here. */
  logDir: string;
}

export class ChaosFleet {
  /** Every process ever started, oldest first. */
  readonly processes: FleetProcess[] = [];
  /** The current process of each slot. */
  private readonly slots: (FleetProcess | undefined)[] = [];
  private counter = 0;

  constructor(private readonly options: ChaosFleetOptions) {}

  /** Identity of regular slot `slot`. */
  identityOf(slot: number): string {
    return `chaos-${slot + 1}`;
  }

  /** The slot kept for a second process with another replica's identity. */
  get duplicateSlot(): number {
    return this.options.replicas;
  }

  /** Starts a process in `slot` (with `identity`, default the slot's own) and waits until it listens. */
  async spawn(slot: number, identity = this.identityOf(slot)): Promise<FleetProcess> {
    const instance = `${identity}#${++this.counter}`;
    const replica = ReplicaProcess.start({
      identity,
      port: 0,
      env: { ...this.options.env, KUBECONFIG: this.options.kubeconfigPath(slot) },
      logDir: this.options.logDir,
    });
    const process: FleetProcess = {
      instance,
      slot,
      identity,
      replica,
      spawnedAt: Date.now(),
      expectedExit: false,
      unresponsiveUntil: 0,
      exited: replica.exited.then((status) => {
        process.exit = {
          at: Date.now(),
          code: status.code,
          signal: status.signal,
          expected: process.expectedExit,
        };
        return process.exit;
      }),
    };
    this.processes.push(process);
    this.slots[slot] = process;
    await replica.started(60_000);
    return process;
  }

  /** Starts every regular slot. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.replicas }, (_, slot) => this.spawn(slot)));
  }

  /** The current process of `slot`, if running. */
  running(slot: number): FleetProcess | undefined {
    const p = this.slots[slot];
    return p && p.replica.running ? p : undefined;
  }

  /** Every running process. */
  get alive(): FleetProcess[] {
    return this.processes.filter((p) => p.replica.running);
  }

  /** Sends `signal`; marks the exit as the harness's doing. */
  signal(p: FleetProcess, signal: NodeJS.Signals): void {
    if (signal === 'SIGKILL' || signal === 'SIGTERM') {
      p.expectedExit = true;
      p.stoppingAt ??= Date.now();
    }
    p.replica.kill(signal);
  }

  /**
   * The leader by the processes' own events: among running processes that are not paused, the
   * one whose last `leadership-acquired` has no `leadership-lost` after it (highest token wins).
   */
  leader(now = Date.now()): { process: FleetProcess; token: number } | undefined {
    let best: { process: FleetProcess; token: number } | undefined;
    for (const p of this.alive) {
      if (p.unresponsiveUntil > now) continue;
      const last = [...p.replica.events]
        .reverse()
        .find(
          (r) => r.event.event === 'leadership-acquired' || r.event.event === 'leadership-lost',
        );
      if (last?.event.event !== 'leadership-acquired') continue;
      const token = last.event.leaseTransitions;
      if (!best || token > best.token) best = { process: p, token };
    }
    return best;
  }

  /** Wall-clock ms of the process's latest `leader-work` line, or 0. */
  lastWorkAt(p: FleetProcess): number {
    for (let i = p.replica.events.length - 1; i >= 0; i--) {
      const e = p.replica.events[i]!.event;
      if (e.event === 'leader-work') return Date.parse(e.at);
    }
    return 0;
  }

  /** Highest token any process has announced acquiring. */
  highestToken(): number {
    let highest = -1;
    for (const p of this.processes) {
      for (const { event } of p.replica.events) {
        if (event.event === 'leadership-acquired')
          highest = Math.max(highest, event.leaseTransitions);
      }
    }
    return highest;
  }

  /** Number of terms announced so far (`leadership-acquired` lines of every process). */
  termCount(): number {
    let count = 0;
    for (const p of this.processes) {
      for (const { event } of p.replica.events) {
        if (event.event === 'leadership-acquired') count += 1;
      }
    }
    return count;
  }

  /** GET /leader of `p`, or undefined. */
  status(p: FleetProcess, timeoutMs = 2000): Promise<LeaderStatus | undefined> {
    return p.replica.leaderStatus(timeoutMs);
  }

  /** Stops every running process (SIGTERM, SIGKILL after `timeoutMs`); all expected. */
  async stop(timeoutMs = 20_000): Promise<void> {
    await Promise.all(
      this.alive.map(async (p) => {
        p.expectedExit = true;
        p.stoppingAt ??= Date.now();
        await p.replica.stop(timeoutMs);
        await p.exited;
      }),
    );
  }

  /** SIGKILLs everything still running (emergency cleanup). */
  kill(): void {
    for (const p of this.processes) {
      p.expectedExit = true;
      p.replica.kill('SIGCONT');
      p.replica.kill('SIGKILL');
    }
  }

  /** What the invariant checker reads. */
  logs(): ProcessLog[] {
    return this.processes.map((p) => ({
      instance: p.instance,
      identity: p.identity,
      slot: p.slot,
      pid: p.replica.pid,
      events: p.replica.events.map((r) => r.event),
      receivedAt: p.replica.events.map((r) => Math.round(performance.timeOrigin + r.receivedAt)),
      spawnedAt: p.spawnedAt,
      stoppingAt: p.stoppingAt,
      exit: p.exit,
    }));
  }

  /** Where process logs are written. */
  logFile(p: FleetProcess): string {
    return join(this.options.logDir, `${p.identity}.out.log`);
  }
}
