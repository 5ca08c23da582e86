/**
 * A fleet: the candidate processes of one implementation on one Lease — started, replaced
 * after a kill (a new pod: new identity, same credentials), asked who leads, stopped.
 */
import {
  CandidateProcess,
  type CandidateEvent,
  type Implementation,
} from '@nest-leader/test/support/candidate-process.js';
import type { ClusterInfo } from '@nest-leader/test/support/control-plane.js';
import {
  leadershipIntervals,
  overlappingIntervals,
} from '@nest-leader/test/support/leadership-timeline.js';
import type { LeaderElectionTimings } from 'nest-leader';
import { sleep } from '../support/sleep.js';

/** Short names used in identities and tables. */
export const SHORT_NAME: Record<Implementation, string> = {
  'client-go': 'go',
  'nest-leader': 'ts',
};

export interface FleetOptions {
  implementation: Implementation;
  leaseName: string;
  timings: LeaderElectionTimings;
  /** One candidate process per user (its kubeconfig); a replacement takes the killed one's user. */
  users: readonly string[];
  /** Candidates per process (the scale benchmark); default 1. */
  candidatesPerProcess?: number;
  /**
   * nest-leader only: every candidate's `podTemplateHash` — they advertise themselves, so a
   * handoff to one is offered first (`handoff-offer.ts`); default none.
   */
  podTemplateHash?: string;
}

/** A handover measured from the kill of the leader to another candidate's `started`. */
export interface Handover {
  from: string;
  to: string;
  signal: 'SIGTERM' | 'SIGKILL';
  ms: number;
}

export class Fleet {
  readonly implementation: Implementation;
  readonly leaseName: string;
  /** Every process ever started, alive or not. */
  readonly all: CandidateProcess[] = [];
  /** Live processes. */
  private readonly live = new Set<CandidateProcess>();
  /** The user each process (live or not) authenticates as. */
  private readonly users = new Map<CandidateProcess, string>();
  private counter = 0;
  /** Replacements being started in the background (awaited by {@link ready}). */
  private pending: Promise<unknown>[] = [];

  constructor(
    private readonly cluster: ClusterInfo,
    private readonly options: FleetOptions,
  ) {
    this.implementation = options.implementation;
    this.leaseName = options.leaseName;
  }

  /** Starts one process per user and waits until each is campaigning. */
  async start(): Promise<void> {
    await Promise.all(this.options.users.map((user) => this.spawn(user)));
  }

  get processes(): CandidateProcess[] {
    return [...this.live.keys()];
  }

  private async spawn(user: string): Promise<CandidateProcess> {
    const count = this.options.candidatesPerProcess ?? 1;
    const process = await CandidateProcess.start({
      implementation: this.implementation,
      kubeconfigPath: this.cluster.identities[user]!.kubeconfigPath,
      leaseName: this.leaseName,
      namespace: this.cluster.namespace,
      identity: `${SHORT_NAME[this.implementation]}-${user}-${++this.counter}`,
      timings: this.options.timings,
      candidates: count,
      podTemplateHash: this.options.podTemplateHash,
    });
    this.all.push(process);
    this.live.add(process);
    this.users.set(process, user);
    const ready = new Set<string>();
    await process.waitFor(
      (e) => e.event === 'ready' && ready.add(e.identity).size === count,
      60_000,
      `${count} ready events`,
    );
    return process;
  }

  /**
   * The candidate that leads now by its events: of the live, not killed processes' open terms,
   * the one that began last.
   */
  leader(): { process: CandidateProcess; identity: string; since: CandidateEvent } | undefined {
    let latest: { process: CandidateProcess; identity: string; since: CandidateEvent } | undefined;
    for (const process of this.live) {
      if (process.killed) continue;
      const open = new Map<string, CandidateEvent>();
      for (const e of process.events) {
        if (e.event === 'started') open.set(e.identity, e);
        if (e.event === 'stopping' || e.event === 'stopped') open.delete(e.identity);
      }
      for (const [identity, since] of open) {
        if (!latest || since.monotonicMs > latest.since.monotonicMs) {
          latest = { process, identity, since };
        }
      }
    }
    return latest;
  }

  /** Waits until replacements started by {@link handOver} are campaigning. */
  async ready(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
  }

  /** Waits for a leader whose term began after `afterMs` (CLOCK_MONOTONIC). */
  async waitForLeader(timeoutMs: number, afterMs = 0) {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const leader = this.leader();
      if (leader && leader.since.monotonicMs > afterMs) return leader;
      if (performance.now() > deadline) {
        throw new Error(`${this.describe()}: no leader within ${timeoutMs} ms`);
      }
      await sleep(5);
    }
  }

  /** Waits until every live candidate (of every process) has seen `leader` as the holder. */
  async waitUntilAllFollow(leader: string, timeoutMs: number): Promise<void> {
    const count = this.options.candidatesPerProcess ?? 1;
    await Promise.all(
      this.processes.map((process) => {
        const seen = new Set<string>();
        return process.waitFor(
          (e) =>
            e.event === 'new-leader' && e.leader === leader && seen.add(e.identity).size === count,
          timeoutMs,
          `new-leader ${leader} from all ${count} candidates`,
        );
      }),
    );
  }

  /** The user `process` authenticates as. */
  userOf(process: CandidateProcess): string | undefined {
    return this.users.get(process);
  }

  /**
   * Kills the leader's process with `signal` and waits for another candidate's `started`; a
   * replacement (same user, new identity) starts in the background ({@link ready}).
   */
  async handOver(signal: Handover['signal'], timeoutMs: number): Promise<Handover> {
    const leader = this.leader();
    if (!leader) throw new Error(`${this.describe()}: no leader to kill`);
    const killedMs = leader.process.kill(signal);
    const next = await this.waitForLeader(timeoutMs, killedMs);
    const user = this.users.get(leader.process)!;
    this.live.delete(leader.process);
    // The replacement starts in the background, while other fleets measure; see ready().
    this.pending.push(leader.process.exited.then(() => this.spawn(user)));
    return {
      from: leader.identity,
      to: next.identity,
      signal,
      ms: Math.round((next.since.monotonicMs - killedMs) * 10) / 10,
    };
  }

  /**
   * nest-leader only: orders the leader to hand its term to another live candidate (chosen at
   * random; `transferLeadership`) and waits for the target's `started`. Measured like
   * {@link handOver}, from the order; nothing is replaced (the old leader stays a candidate).
   * @throws Error if the handoff fails, or the target does not start within `timeoutMs`.
   */
  async transfer(timeoutMs: number): Promise<Omit<Handover, 'signal'>> {
    const leader = this.leader();
    if (!leader) throw new Error(`${this.describe()}: no leader to hand off`);
    const others = this.processes.filter((p) => p !== leader.process && !p.killed);
    const target = others[Math.floor(Math.random() * others.length)];
    if (!target) throw new Error(`${this.describe()}: no candidate to hand off to`);
    const orderedMs = leader.process.transferLeadership(leader.identity, target.identity);
    const started = await Promise.race([
      target.waitFor((e) => e.event === 'started' && e.monotonicMs > orderedMs, timeoutMs),
      leader.process
        .waitFor((e) => e.event === 'handoff-failed' && e.monotonicMs > orderedMs, timeoutMs)
        .then((e) => Promise.reject(new Error(`handoff failed: ${e.reason}`))),
    ]);
    return {
      from: leader.identity,
      to: target.identity,
      ms: Math.round((started.monotonicMs - orderedMs) * 10) / 10,
    };
  }

  /** Pairs of terms that overlapped in time, by the candidates' own events (must be 0). */
  overlappingTerms(): number {
    return overlappingIntervals(leadershipIntervals(this.all)).length;
  }

  /** SIGTERMs every live process (release) and waits; SIGKILL after 15 s. */
  async stop(): Promise<void> {
    await this.ready();
    await Promise.all(
      this.processes.map(async (process) => {
        process.kill('SIGTERM');
        const timer = setTimeout(() => void process.dispose(), 15_000);
        await process.exited;
        clearTimeout(timer);
      }),
    );
    this.live.clear();
  }

  /** SIGKILLs whatever still runs. */
  async dispose(): Promise<void> {
    await Promise.allSettled(this.pending);
    await Promise.all(this.all.map((process) => process.dispose()));
    this.live.clear();
  }

  describe(): string {
    return `${this.implementation} fleet on Lease ${this.leaseName}`;
  }
}
