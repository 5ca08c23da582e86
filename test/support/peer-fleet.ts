/**
 * A mixed fleet of leader-election candidates as real OS processes on one Kubernetes lock:
 * nest-leader candidates (test/support/candidate.main.ts) and Python candidates using the
 * official client's `kubernetes.leaderelection` (test/python/candidate.py). Both print the same
 * JSON event lines; the fleet turns them into leadership intervals (on this process's monotonic
 * clock) and checks that no two intervals of different processes overlap.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { LeaderElectionTimings } from 'nest-leader';
import { repoRoot } from './control-plane.js';
import { PYTHON_DIR } from './python-client.js';
import type { TestLockKind } from './kubernetes-locks.js';

/** Implementation of a candidate. */
export type PeerKind = 'nest-leader' | 'python';

/** One event line of a candidate, stamped with `performance.now()` when it arrived. */
export interface PeerEvent {
  event: string;
  identity: string;
  kind: PeerKind;
  leaseTransitions?: number;
  atMs: number;
}

/** A span during which one candidate believed it led. `endMs` undefined: still leading. */
export interface LeadershipInterval {
  identity: string;
  kind: PeerKind;
  startMs: number;
  endMs: number | undefined;
}

/** Options of {@link PeerFleet}. */
export interface PeerFleetOptions {
  lock: TestLockKind;
  /** Lease or ConfigMap name. */
  name: string;
  namespace: string;
  timings: LeaderElectionTimings;
  /** The virtualenv's python (from `ensurePythonClient()`), for Python candidates. */
  python?: string;
}

const NODE_CANDIDATE = join(repoRoot, 'test/dist/support/candidate.main.js');

/** One candidate process. */
export class Peer {
  readonly events: PeerEvent[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<void>;
  private readonly listeners = new Set<() => void>();
  /** When it was sent SIGKILL (its leadership ends right there). */
  killedAtMs: number | undefined;
  /** When its process exited. */
  exitedAtMs: number | undefined;

  constructor(
    readonly identity: string,
    readonly kind: PeerKind,
    readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let parsed: Omit<PeerEvent, 'atMs'>;
      try {
        parsed = JSON.parse(line) as Omit<PeerEvent, 'atMs'>;
      } catch {
        this.stderr.push(`stdout: ${line}`);
        return;
      }
      this.events.push({ ...parsed, atMs: performance.now() });
      for (const listener of this.listeners) listener();
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      this.stderr.push(line);
      if (this.stderr.length > 400) this.stderr.shift();
    });
    this.exited = once(child, 'exit').then(() => {
      this.exitedAtMs = performance.now();
    });
  }

  /** True between its last `started-leading` and a later `stopped-leading` or kill. */
  get leading(): boolean {
    return this.intervals().some((i) => i.endMs === undefined);
  }

  /** Its leadership intervals; a kill ends an open one at the kill. */
  intervals(): LeadershipInterval[] {
    const out: LeadershipInterval[] = [];
    let open: LeadershipInterval | undefined;
    for (const e of this.events) {
      if (e.event === 'started-leading' && !open) {
        open = { identity: this.identity, kind: this.kind, startMs: e.atMs, endMs: undefined };
        out.push(open);
      } else if ((e.event === 'stopped-leading' || e.event === 'stopped') && open) {
        open.endMs = e.atMs;
        open = undefined;
      }
    }
    if (open) open.endMs = this.killedAtMs ?? this.exitedAtMs;
    return out;
  }

  /** Resolves with the first event (from index `from`) matching `predicate`. */
  waitFor(predicate: (e: PeerEvent) => boolean, timeoutMs: number, from = 0): Promise<PeerEvent> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.events.slice(from).find(predicate);
        if (!found) return false;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(found);
        return true;
      };
      const listener = () => void check();
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`${this.identity}: no matching event within ${timeoutMs} ms`));
      }, timeoutMs);
      this.listeners.add(listener);
      check();
    });
  }

  /** Sends `signal`; a SIGKILL ends its leadership now (it can do nothing after it). */
  kill(signal: NodeJS.Signals): void {
    if (signal === 'SIGKILL') this.killedAtMs = performance.now();
    this.child.kill(signal);
  }
}

/** Candidates of both kinds on one lock. */
export class PeerFleet {
  readonly peers: Peer[] = [];

  constructor(private readonly options: PeerFleetOptions) {}

  /** Starts a candidate with `identity`, authenticated by the kubeconfig at `kubeconfigPath`. */
  async start(kind: PeerKind, identity: string, kubeconfigPath: string): Promise<Peer> {
    const { lock, name, namespace, timings } = this.options;
    const args = [
      '--lock',
      lock,
      '--name',
      name,
      '--namespace',
      namespace,
      '--identity',
      identity,
      '--lease-duration',
      String(timings.leaseDurationSeconds),
      '--renew-deadline',
      String(timings.renewDeadlineSeconds),
      '--retry-period',
      String(timings.retryPeriodSeconds),
    ];
    const env = { ...process.env, KUBECONFIG: kubeconfigPath, PYTHONUNBUFFERED: '1' };
    let child: ChildProcess;
    if (kind === 'python') {
      if (!this.options.python) throw new Error('PeerFleet: no python given for Python peers');
      child = spawn(this.options.python, [join(PYTHON_DIR, 'candidate.py'), ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } else {
      child = spawn(process.execPath, [NODE_CANDIDATE, ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    }
    const peer = new Peer(identity, kind, child);
    this.peers.push(peer);
    await peer.waitFor((e) => e.event === 'campaigning', 30_000);
    return peer;
  }

  /** Peers whose process has not been killed or exited. */
  get alive(): Peer[] {
    return this.peers.filter((p) => p.killedAtMs === undefined && p.exitedAtMs === undefined);
  }

  /** Every leadership interval of every peer, ordered by start. */
  intervals(): LeadershipInterval[] {
    return this.peers.flatMap((p) => p.intervals()).sort((a, b) => a.startMs - b.startMs);
  }

  /** Pairs of intervals of different peers that overlap in time: must be empty. */
  overlaps(): [LeadershipInterval, LeadershipInterval][] {
    const all = this.intervals();
    const found: [LeadershipInterval, LeadershipInterval][] = [];
    for (let i = 0; i < all.length; i++) {
      for (let j = i + 1; j < all.length; j++) {
        const a = all[i]!;
        const b = all[j]!;
        if (a.identity !== b.identity && b.startMs < (a.endMs ?? Infinity)) found.push([a, b]);
      }
    }
    return found;
  }

  /** The first `started-leading` of any peer but `except` after `afterMs`. */
  async nextLeader(afterMs: number, timeoutMs: number, except?: Peer): Promise<[Peer, PeerEvent]> {
    const candidates = this.peers.filter((p) => p !== except);
    return Promise.any(
      candidates.map(async (p) => {
        const e = await p.waitFor(
          (x) => x.event === 'started-leading' && x.atMs >= afterMs,
          timeoutMs,
        );
        return [p, e] as [Peer, PeerEvent];
      }),
    ).catch(() => {
      throw new Error(`no new leader within ${timeoutMs} ms\n${this.describe()}`);
    });
  }

  /** Events and log tails of every peer, for assertion messages. */
  describe(): string {
    return this.peers
      .map(
        (p) =>
          `${p.kind} ${p.identity}: ${p.events.map((e) => `${e.event}@${Math.round(e.atMs)}`).join(' ')}\n` +
          p.stderr
            .slice(-8)
            .map((l) => `    ${l}`)
            .join('\n'),
      )
      .join('\n');
  }

  /** SIGKILLs every live peer and waits for them to exit. */
  async killAll(): Promise<void> {
    for (const p of this.peers) if (p.exitedAtMs === undefined) p.kill('SIGKILL');
    await Promise.all(this.peers.map((p) => p.exited));
  }
}
