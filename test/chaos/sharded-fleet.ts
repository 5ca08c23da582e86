/**
 * One sharded election of the chaos harness's sharded mode: its member processes (the candidate
 * harness's `sharded` program), each on a slot with its own toxiproxy link in front of the API
 * server (so a fault can cut one member off), a fenced ledger per shard that every member writes
 * to, and the views the rounds need: who is up, who coordinates, whether every shard is owned and
 * the members are balanced within ±1.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Toxiproxy } from 'toxiproxy-node-client';
import { KubeConfig } from '@kubernetes/client-node';
import type { LeaderElectionTimings } from 'nest-leader';
import type { CandidateProcess } from '../support/candidate-process.js';
import type { ClusterInfo } from '../support/control-plane.js';
import { monotonicNowMs } from '../support/monotonic-time.js';
import { balanced, latestUnits, startShardedMemberAt } from '../support/sharded-members.js';
import { ReplicaLink } from './replica-link.js';
import type { MemberLog } from './shard-logs.js';
import { MAX_MEMBERS } from './sharded-fault-kinds.js';

/** A member process of the election, on its slot. */
export interface LaneMember {
  process: CandidateProcess;
  slot: number;
  /** While this file exists, the member stops in its write window (`--pause-file`). */
  pauseFile: string;
  spawnedAtMs: number;
  /** CLOCK_MONOTONIC when the harness sent SIGTERM/SIGKILL (or ended the run). */
  stoppingAtMs?: number;
  /** True once the harness has stopped or killed it on purpose. */
  expectedExit: boolean;
}

export interface ShardedLaneOptions {
  /** The election's number in the run (its Leases, identities and slots are its own). */
  lane: number;
  cluster: ClusterInfo;
  toxiproxy: Toxiproxy;
  /** The users members authenticate as, in turn (each granted the sharded verbs). */
  users: readonly string[];
  leaseName: string;
  shards: number;
  timings: LeaderElectionTimings;
  /** Directory of the lane's kubeconfigs, pause files and fenced ledgers. */
  dir: string;
  /** Further flags of the member started `n`-th (from 1), e.g. `--ignore-revoke`. */
  extraArgs?: (n: number) => readonly string[];
  /**
   * Shared by the lanes of a run: at most this many member processes start at once (a Node
   * process starting takes seconds of CPU; many at once on a small machine miss their 30 s).
   */
  startGate?: StartGate;
}

/** At most `limit` holders at a time, first come first served. */
export class StartGate {
  private holders = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Runs `task` once a place is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.holders >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.holders += 1;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.holders -= 1;
    }
  }
}

/** The members of one sharded election and their links. */
export class ShardedLane {
  readonly lane: number;
  readonly shards: number;
  readonly leaseName: string;
  /** Every member process ever started, in order. */
  readonly history: LaneMember[] = [];
  /** Members running now (not killed, not terminated; paused or partitioned ones included). */
  live: LaneMember[] = [];
  readonly links: ReplicaLink[] = [];
  readonly fencedDir: string;
  private readonly kubeconfigs: string[] = [];
  private started = 0;

  private constructor(private readonly options: ShardedLaneOptions) {
    this.lane = options.lane;
    this.shards = options.shards;
    this.leaseName = options.leaseName;
    this.fencedDir = join(options.dir, 'fenced');
  }

  /** Creates the lane's links (one per slot: at most 5 members and one replacing another). */
  static async create(options: ShardedLaneOptions): Promise<ShardedLane> {
    const lane = new ShardedLane(options);
    mkdirSync(lane.fencedDir, { recursive: true });
    const upstream = new URL(options.cluster.url).host;
    for (let slot = 0; slot <= MAX_MEMBERS; slot++) {
      const link = await ReplicaLink.create(
        options.toxiproxy,
        `lane-${options.lane}-slot-${slot}`,
        upstream,
      );
      const user = options.users[slot % options.users.length]!;
      const kc = new KubeConfig();
      kc.loadFromFile(options.cluster.identities[user]!.kubeconfigPath);
      const cluster = kc.getCurrentCluster()!;
      const context = kc.getContextObject(kc.getCurrentContext())!;
      const linked = new KubeConfig();
      linked.loadFromOptions({
        clusters: [{ ...cluster, server: link.url }],
        users: [kc.getCurrentUser()!],
        contexts: [context],
        currentContext: context.name,
      });
      const path = join(options.dir, `kubeconfig-slot-${slot}`);
      writeFileSync(path, linked.exportConfig(), { mode: 0o600 });
      lane.links.push(link);
      lane.kubeconfigs.push(path);
    }
    return lane;
  }

  /** Starts a new member on a free slot and waits for its `ready`. */
  async spawn(): Promise<LaneMember> {
    const taken = new Set(this.live.map((m) => m.slot));
    const slot = [...this.kubeconfigs.keys()].find((s) => !taken.has(s));
    if (slot === undefined) throw new Error(`lane ${this.lane}: no free slot`);
    this.started += 1;
    const n = this.started;
    const identity = `l${this.lane}-m${n}`;
    const pauseFile = join(this.options.dir, `pause-${identity}`);
    const fleet: CandidateProcess[] = [];
    const spawnedAtMs = monotonicNowMs();
    const start = () =>
      startShardedMemberAt(
        {
          kubeconfigPath: this.kubeconfigs[slot]!,
          leaseName: this.leaseName,
          namespace: this.options.cluster.namespace,
        },
        identity,
        this.shards,
        this.options.timings,
        fleet,
        [
          '--fenced-dir',
          this.fencedDir,
          '--quiet-accepted',
          '--pause-file',
          pauseFile,
          ...(this.options.extraArgs?.(n) ?? []),
        ],
      );
    try {
      const process = await (this.options.startGate?.run(start) ?? start());
      const member: LaneMember = { process, slot, pauseFile, spawnedAtMs, expectedExit: false };
      this.history.push(member);
      this.live.push(member);
      return member;
    } catch (error) {
      for (const p of fleet) {
        this.history.push({ process: p, slot, pauseFile, spawnedAtMs, expectedExit: true });
        await p.dispose();
      }
      throw error;
    }
  }

  /** Sends `signal` (SIGKILL, SIGTERM) to `member` and takes it out of {@link live}. */
  stop(member: LaneMember, signal: 'SIGKILL' | 'SIGTERM'): number {
    member.expectedExit = true;
    member.stoppingAtMs = monotonicNowMs();
    this.live = this.live.filter((m) => m !== member);
    return member.process.kill(signal);
  }

  /** The member that said last it coordinates the election, if any is live. */
  coordinator(): LaneMember | undefined {
    let best: { member: LaneMember; atMs: number } | undefined;
    for (const member of this.live) {
      const units = latestUnits(member.process, -Infinity);
      if (units?.coordinator && (!best || units.monotonicMs > best.atMs)) {
        best = { member, atMs: units.monotonicMs };
      }
    }
    return best?.member;
  }

  /** The shards `member` worked on at its latest units line. */
  shardsOf(member: LaneMember): number[] {
    return latestUnits(member.process, -Infinity)?.shards ?? [];
  }

  /**
   * Resolves with CLOCK_MONOTONIC of the units line that showed every shard owned once among
   * `members` (default the live ones) and each within ±1 of N/R, by lines after `sinceMs`.
   * @throws the last unmet condition after `timeoutMs`.
   */
  balanced(sinceMs: number, timeoutMs: number, members = this.live): Promise<number> {
    return balanced(
      members.map((m) => m.process),
      this.shards,
      sinceMs,
      timeoutMs,
    );
  }

  /** Kills every member still running (the end of the run) and waits for their exits. */
  async dispose(): Promise<void> {
    for (const member of this.history) {
      if (member.process.exitStatus) continue;
      member.expectedExit = true;
      member.stoppingAtMs ??= monotonicNowMs();
      member.process.resume();
    }
    await Promise.all(
      this.history.map(async (member) => {
        if (member.process.exitStatus) return;
        member.process.kill('SIGTERM');
        const exited = await Promise.race([
          member.process.exited.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), 5000)),
        ]);
        if (!exited) await member.process.dispose();
      }),
    );
    this.live = [];
    for (const link of this.links) await link.heal().catch(() => undefined);
  }

  /** The members' logs for the per-shard judge; `offsetMs` maps CLOCK_MONOTONIC to wall ms. */
  memberLogs(offsetMs: number): MemberLog[] {
    return this.history.map((m) => ({
      instance: m.process.identity,
      identity: `lane ${this.lane} slot ${m.slot}`,
      slot: this.lane * 10 + m.slot,
      events: m.process.events,
      spawnedAt: m.spawnedAtMs + offsetMs,
      ...(m.stoppingAtMs !== undefined && { stoppingAt: m.stoppingAtMs + offsetMs }),
      ...(m.process.exitStatus && {
        exit: {
          at: m.process.exitStatus.monotonicMs + offsetMs,
          code: m.process.exitStatus.code,
          signal: m.process.exitStatus.signal,
          expected: m.expectedExit,
        },
      }),
    }));
  }
}
