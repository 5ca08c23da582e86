/**
 * Leader-election candidates as real OS processes, of either implementation, seen from outside:
 *
 * - `client-go`: `test/client-go-candidate` (client-go's `tools/leaderelection` + `LeaseLock`),
 *   built and cached by `scripts/client-go-candidate.sh`;
 * - `nest-leader`: `test/support/nest-leader-candidate.ts` (our `LeaderElector` + `LeaseLock`, or
 *   `ConfigMapLock` with `lock`, or `FileLock` on `lockFile` with `lock: 'file'`; with
 *   `--fenced-db` in `extraArgs`, also a fenced writer; with `--work-units`, a leader doing units
 *   of work), or `test/support/scheduled-job-candidate.ts` (`program`);
 * - `python`: `test/python/candidate.py` (the official Python client's
 *   `kubernetes.leaderelection`, from the virtualenv of `ensurePythonClient()`);
 * - `unsafe`: `test/support/unsafe-candidate.ts`, deliberately wrong (expiry by the remote
 *   renewTime against its own wall clock, never stepping down at renewDeadline): the checkers'
 *   positive control.
 *
 * All take the same flags and print the same JSON-lines events ({@link CandidateEvent}) stamped
 * with CLOCK_MONOTONIC ({@link monotonicNowMs}), so events of all processes and of the test
 * compare on one time line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { LeaderElectionTimings } from 'nest-leader';
import { type ClusterInfo, repoRoot } from './control-plane.js';
import { eventually, found } from './eventually.js';
import type { TestLockKind } from './kubernetes-locks.js';
import { monotonicNowMs } from './monotonic-time.js';
import { ensurePythonClient, PYTHON_DIR } from './python-client.js';

/** The Lease elections compared side by side (tests, benchmarks): client-go's and ours. */
export type Implementation = 'client-go' | 'nest-leader';

/**
 * Which leader election a candidate process runs: one of those, the Python client's, or the
 * deliberately unsafe one of the positive controls.
 */
export type CandidateImplementation = Implementation | 'python' | 'unsafe';

/** One JSON line a candidate process prints. */
export interface CandidateEvent {
  /**
   * `ready`: the candidate starts campaigning; `new-leader`: it observed a new holder
   * (`leader`); `started`: its term began (leader-only work may run); `stopping` (client-go
   * only): SIGTERM while leading, its leader-only work ends now, before the release;
   * `stopped`: its term ended; `exit`: the process is about to exit (`reason`).
   * nest-leader only, after a transfer order ({@link CandidateProcess.transferLeadership}):
   * `handed-off` — the handoff of the term `leaseTransitions` to `leader` is written;
   * `handoff-failed` — it was refused or failed (`reason`: the error's message).
   * nest-leader only: `log` — a log line of the library (`level`, `message`).
   * `scheduled-job-app` only: `slot-begun`, `slot-done`, `slot-refused` — a run of its job's
   * slot (`slotMs`) under fencing token `token` began, wrote its effect (or found it written:
   * `alreadyDone`), or had its effect refused by the fence (`error`).
   * nest-leader `--fenced-db` only: `write-window` — past its gate with fencing token `token`,
   * it waits to write until its `--pause-file` is gone; `write-accepted`, `write-rejected` —
   * its ledger write `entry` under `token` was accepted, or refused by the database (`error`).
   * nest-leader `elector` and `sharded` only: `memory` — its `rssBytes` and `heapUsedBytes` after
   * a full GC, on SIGUSR2 ({@link CandidateProcess.memory}).
   * nest-leader `--work-units` and `unsafe` only: `unit-done`, `unit-refused` — unit of work
   * `unit` of the term with fencing token `token` ran, or was refused because its term check
   * failed (`unsafe` never checks, never refuses).
   */
  event:
    | 'ready'
    | 'new-leader'
    | 'started'
    | 'stopping'
    | 'stopped'
    | 'exit'
    | 'handed-off'
    | 'handoff-failed'
    | 'log'
    | 'slot-begun'
    | 'slot-done'
    | 'slot-refused'
    | 'write-window'
    | 'write-accepted'
    | 'write-rejected'
    | 'unit-done'
    | 'unit-refused'
    | 'units'
    | 'memory';
  /** The candidate's holderIdentity. */
  identity: string;
  /** `new-leader`: the observed holder. */
  leader?: string;
  /**
   * `exit`: `signal` or `lost`; nest-leader `started`: why the term began (the
   * `LeadershipChangeReason`: handoff, release, expired, created); `handoff-failed`: why.
   */
  reason?: string;
  /** `log`: `info`, `warn` or `error`. */
  level?: string;
  /** `log`: the library's message. */
  message?: string;
  /** nest-leader and `unsafe` `started`/`stopped`: the term's leaseTransitions. */
  leaseTransitions?: number;
  /** `slot-*`: the slot's scheduled time, epoch ms. */
  slotMs?: number;
  /** `slot-*`, `write-*`, `unit-*`: the fencing token of the run, write or unit of work. */
  token?: number;
  /** `sharded` `started`/`stopped`: the shard of the shard term. */
  shard?: number;
  /**
   * `sharded` `started`: the term's call-time check after the line's stamp; false when a pause
   * (SIGSTOP) fell between the library's check and the line, which then proves no live moment.
   */
  live?: boolean;
  /** `sharded` `units`: the shards whose term was live at this tick, with their `tokens`. */
  shards?: number[];
  /** `sharded` `units`: the token of each of `shards`. */
  tokens?: number[];
  /** `sharded` `units`: whether this member coordinated the election right then. */
  coordinator?: boolean;
  /** `memory`: resident set size after a full GC, bytes. */
  rssBytes?: number;
  /** `memory`: V8 heap in use after a full GC, bytes. */
  heapUsedBytes?: number;
  /** `unit-*`: the unit of work's number in its term, from 1. */
  unit?: number;
  /** `write-accepted`, `write-rejected`: the ledger entry written. */
  entry?: string;
  /** `slot-refused`, `write-rejected`: the database's refusal. */
  error?: string;
  /** `slot-done`: the slot's effect was already written (a redo found it). */
  alreadyDone?: boolean;
  /** CLOCK_MONOTONIC when it happened, ms. */
  monotonicMs: number;
  /** Wall clock, ISO 8601, for humans. */
  time: string;
}

/** A line on a nest-leader candidate's stdin: hand `from`'s term to `to`. */
export interface TransferOrder {
  transfer: { from: string; to: string; leaseDurationSeconds?: number };
}

/** What a candidate campaigns on: a Kubernetes object… */
export interface KubernetesLockTarget {
  /** Kubeconfig of the user the process authenticates as. */
  kubeconfigPath: string;
  leaseName: string;
  namespace: string;
  /** `--lock`: the lock kind (nest-leader and python; client-go takes a Lease only). */
  lock?: TestLockKind;
}

/** Lease `leaseName` in `cluster`'s namespace, campaigned for as the cluster's identity `user`. */
export function leaseTarget(
  cluster: ClusterInfo,
  user: string,
  leaseName: string,
): KubernetesLockTarget {
  return {
    kubeconfigPath: cluster.identities[user]!.kubeconfigPath,
    leaseName,
    namespace: cluster.namespace,
  };
}

/** …or, nest-leader only, a lease file (`--lock file --lock-file`). */
export interface FileLockTarget {
  lock: 'file';
  /** Path of the lease file. */
  lockFile: string;
}

/** Options of {@link CandidateProcess.start} whatever the lock. */
export interface CandidateProcessSettings {
  implementation: CandidateImplementation;
  /** holderIdentity; with `candidates` > 1 the candidates are `<identity>-1` … `<identity>-N`. */
  identity: string;
  timings: LeaderElectionTimings;
  /** Candidates in this one process, each with its own elector and client; default 1. */
  candidates?: number;
  /**
   * Release the Lease on SIGTERM (client-go's ReleaseOnCancel, our releaseOnStop); default true.
   * Must be false for python (the Python client has no release).
   */
  releaseOnCancel?: boolean;
  /**
   * nest-leader only: the candidate's `podTemplateHash` and `priority` (`--pod-template-hash`,
   * `--priority`): it advertises itself, and a leader it follows may hand off to it on stop.
   */
  podTemplateHash?: string;
  priority?: number;
  /** Further flags for the program. */
  extraArgs?: readonly string[];
  /**
   * nest-leader only: `elector` (default) — `nest-leader-candidate.ts`, bare `LeaderElector`s;
   * `scheduled-job-app` — `scheduled-job-candidate.ts`, a Nest application with a leader-only
   * recurring job (one candidate per process); `sharded` — `sharded-candidate.ts`, one member
   * of a sharded election (`--shards N` in `extraArgs`).
   */
  program?: 'elector' | 'scheduled-job-app' | 'sharded';
  /** A command and arguments to run the process under, e.g. `['unshare', '--pid', '--fork']`. */
  wrapper?: readonly string[];
}

/** Options of {@link CandidateProcess.start}. */
export type CandidateProcessOptions = CandidateProcessSettings &
  (KubernetesLockTarget | FileLockTarget);

/** How the process ended. */
export interface CandidateExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** CLOCK_MONOTONIC when the exit was noticed, ms. */
  monotonicMs: number;
}

const CLIENT_GO_SCRIPT = join(repoRoot, 'scripts/client-go-candidate.sh');
const NEST_LEADER_MAIN = fileURLToPath(new URL('./nest-leader-candidate.js', import.meta.url));
const SCHEDULED_APP_MAIN = fileURLToPath(new URL('./scheduled-job-candidate.js', import.meta.url));
const SHARDED_MAIN = fileURLToPath(new URL('./sharded-candidate.js', import.meta.url));
const PYTHON_MAIN = join(PYTHON_DIR, 'candidate.py');
const UNSAFE_MAIN = fileURLToPath(new URL('./unsafe-candidate.js', import.meta.url));

let clientGoBinary: Promise<string> | undefined;
/** The virtualenv's python, resolved (built if needed) once per process. */
let pythonInterpreter: Promise<string> | undefined;

/** Every candidate process not yet exited: killed when this process exits, so none is orphaned. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Builds the client-go candidate unless cached (`scripts/client-go-candidate.sh build`; its
 * progress lines go to this process's stderr) and resolves the binary's path. Built once per
 * process.
 * @throws Error with the build's output when it fails.
 */
export function buildClientGoCandidate(): Promise<string> {
  clientGoBinary ??= new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [CLIENT_GO_SCRIPT, 'build'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      process.stderr.write(chunk);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const path = stdout.trim().split('\n').at(-1);
      if (code === 0 && path) resolve(path);
      else reject(new Error(`building the client-go candidate failed (exit ${code}):\n${stderr}`));
    });
  });
  return clientGoBinary;
}

function durationFlag(seconds: number): string {
  return `${Math.round(seconds * 1000)}ms`;
}

/** A running (or exited) candidate process and the events it printed so far. */
export class CandidateProcess {
  readonly implementation: CandidateImplementation;
  /** The `--identity` it was given. */
  readonly identity: string;
  /** The Lease it campaigns for; undefined with the file lock. */
  readonly leaseName: string | undefined;
  /** Every event printed so far, in order. */
  readonly events: CandidateEvent[] = [];
  /** Resolves when the process has exited. */
  readonly exited: Promise<CandidateExit>;
  exitStatus: CandidateExit | undefined;
  /** Set by {@link kill}: the first signal sent and CLOCK_MONOTONIC right after sending it. */
  killed: { signal: NodeJS.Signals; monotonicMs: number } | undefined;

  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();
  private stderrText = '';

  private constructor(options: CandidateProcessOptions, child: ChildProcess) {
    this.implementation = options.implementation;
    this.identity = options.identity;
    this.leaseName = options.lock === 'file' ? undefined : options.leaseName;
    this.child = child;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const event = JSON.parse(line) as CandidateEvent;
        this.events.push(event);
        if (event.event === 'log') {
          this.addToTail(`${event.identity} ${event.level}: ${event.message}\n`);
        }
      } catch {
        this.stderrText += `(stdout) ${line}\n`;
      }
      for (const wake of this.waiters) wake();
    });
    child.stderr!.on('data', (chunk: Buffer) => this.addToTail(chunk.toString()));
    running.add(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        this.exitStatus = { code, signal, monotonicMs: monotonicNowMs() };
        for (const wake of this.waiters) wake();
        resolve(this.exitStatus);
      });
    });
  }

  /**
   * Spawns a candidate process (building the client-go one first if needed). Resolves once it
   * is spawned; use {@link waitFor} for its `ready` events, or {@link startReady}.
   */
  static async start(options: CandidateProcessOptions): Promise<CandidateProcess> {
    const { timings } = options;
    const target =
      options.lock === 'file'
        ? ['--lock', 'file', '--lock-file', options.lockFile]
        : [
            '--kubeconfig',
            options.kubeconfigPath,
            '--lease-name',
            options.leaseName,
            '--namespace',
            options.namespace,
            ...(options.lock ? ['--lock', options.lock] : []),
          ];
    const args = [
      ...target,
      '--identity',
      options.identity,
      '--candidates',
      String(options.candidates ?? 1),
      '--lease-duration',
      durationFlag(timings.leaseDurationSeconds),
      '--renew-deadline',
      durationFlag(timings.renewDeadlineSeconds),
      '--retry-period',
      durationFlag(timings.retryPeriodSeconds),
      `--release-on-cancel=${options.releaseOnCancel ?? true}`,
      ...(options.podTemplateHash === undefined
        ? []
        : ['--pod-template-hash', options.podTemplateHash]),
      ...(options.priority === undefined ? [] : ['--priority', String(options.priority)]),
      ...(options.extraArgs ?? []),
    ];
    let command: string[];
    if (options.implementation === 'client-go') {
      command = [await buildClientGoCandidate(), ...args];
    } else if (options.implementation === 'unsafe') {
      command = [process.execPath, UNSAFE_MAIN, ...args];
    } else if (options.implementation === 'python') {
      pythonInterpreter ??= ensurePythonClient();
      command = [await pythonInterpreter, PYTHON_MAIN, ...args];
    } else {
      const main =
        options.program === 'scheduled-job-app'
          ? SCHEDULED_APP_MAIN
          : options.program === 'sharded'
            ? SHARDED_MAIN
            : NEST_LEADER_MAIN;
      command = [process.execPath, main, ...args];
    }
    const [file, ...rest] = [...(options.wrapper ?? []), ...command];
    const child = spawn(file!, rest, {
      // stdin: a nest-leader candidate's transfer orders (transferLeadership).
      stdio: [options.implementation === 'nest-leader' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    return new CandidateProcess(options, child);
  }

  /**
   * {@link start}, then waits up to 30 s for its `ready` event (one candidate per process).
   * `fleet`, if given, receives the process before the wait, so that whoever disposes of the
   * fleet disposes of it too when it never gets ready.
   * @throws Error when it exits or stays silent before `ready`.
   */
  static async startReady(
    options: CandidateProcessOptions,
    fleet?: CandidateProcess[],
  ): Promise<CandidateProcess> {
    const candidate = await CandidateProcess.start(options);
    fleet?.push(candidate);
    await candidate.waitFor((e) => e.event === 'ready', 30_000, 'ready');
    return candidate;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last lines the process wrote to stderr and its last `log` events, for failure messages. */
  get stderrTail(): string {
    return this.stderrText.slice(-3000);
  }

  /** True while its last `started`/`stopped` event is `started` (one candidate per process). */
  get leading(): boolean {
    return this.termStarted !== undefined;
  }

  /** The `started` event of the term it leads in now ({@link leading}); undefined otherwise. */
  get termStarted(): CandidateEvent | undefined {
    const last = this.events.findLast((e) => e.event === 'started' || e.event === 'stopped');
    return last?.event === 'started' ? last : undefined;
  }

  private addToTail(text: string): void {
    this.stderrText = (this.stderrText + text).slice(-8000);
  }

  /**
   * Sends `signal`; the first call records when ({@link killed}). Returns CLOCK_MONOTONIC right
   * after sending, ms.
   */
  kill(signal: NodeJS.Signals): number {
    this.child.kill(signal);
    const monotonicMs = monotonicNowMs();
    this.killed ??= { signal, monotonicMs };
    return monotonicMs;
  }

  /** SIGSTOP: the process stops running until {@link resume}; not a kill ({@link killed}). */
  pause(): void {
    this.child.kill('SIGSTOP');
  }

  /** SIGCONT after {@link pause}. */
  resume(): void {
    this.child.kill('SIGCONT');
  }

  /**
   * nest-leader `elector` program only: orders candidate `from` of this process to hand its
   * term to `to` (`LeaderElector.transferLeadership`, with `leaseDurationSeconds` as the bound
   * if given) by a line on its stdin; it answers with a `handed-off` or `handoff-failed` event.
   * Returns CLOCK_MONOTONIC right before sending the order, ms.
   * @throws Error for a client-go candidate (it has no targeted handoff).
   */
  transferLeadership(from: string, to: string, leaseDurationSeconds?: number): number {
    if (this.implementation !== 'nest-leader' || !this.child.stdin) {
      throw new Error(`${this.describe()} takes no transfer orders`);
    }
    const order: TransferOrder = { transfer: { from, to, leaseDurationSeconds } };
    // Stamped before writing: the child may act on the line before this process runs again.
    const sentMs = monotonicNowMs();
    this.child.stdin.write(`${JSON.stringify(order)}\n`);
    return sentMs;
  }

  /**
   * nest-leader `elector` and `sharded` programs only: its memory after a full GC (SIGUSR2, see
   * `candidate-memory.ts`), bytes.
   * @throws Error when it does not answer within 10 s.
   */
  async memory(): Promise<{ rssBytes: number; heapUsedBytes: number }> {
    const sentMs = monotonicNowMs();
    this.child.kill('SIGUSR2');
    const event = await this.waitFor(
      (e) => e.event === 'memory' && e.monotonicMs > sentMs,
      10_000,
      'its memory report',
    );
    return { rssBytes: event.rssBytes!, heapUsedBytes: event.heapUsedBytes! };
  }

  /** Events matching `predicate`, in order. */
  eventsWhere(predicate: (event: CandidateEvent) => boolean): CandidateEvent[] {
    return this.events.filter(predicate);
  }

  /**
   * Resolves with the first event (already printed or still to come) matching `predicate`.
   * @throws Error after `timeoutMs`, or when the process exits without printing one.
   */
  async waitFor(
    predicate: (event: CandidateEvent) => boolean,
    timeoutMs: number,
    what = 'the event',
  ): Promise<CandidateEvent> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(predicate);
      if (found) return found;
      if (this.exitStatus) {
        throw new Error(`${this.describe()} exited before ${what}:\n${this.stderrTail}`);
      }
      const leftMs = deadline - performance.now();
      if (leftMs <= 0) {
        throw new Error(
          `${this.describe()}: no ${what} within ${timeoutMs} ms:\n${this.stderrTail}`,
        );
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, leftMs);
        this.waiters.add(done);
      });
    }
  }

  /** Sends SIGKILL unless it already exited, and waits for the exit. */
  async dispose(): Promise<void> {
    if (!this.exitStatus) this.child.kill('SIGKILL');
    await this.exited;
  }

  describe(): string {
    return `${this.implementation} candidate ${this.identity} (pid ${this.pid})`;
  }
}

/**
 * Resolves with the first of `processes` that leads ({@link CandidateProcess.leading}) in a term
 * started after `sinceMs` (CLOCK_MONOTONIC; default any) and has neither exited nor been
 * SIGKILLed, polling every 20 ms.
 * @throws Error after `timeoutMs`, with every process's stderr tail.
 */
export function leadingProcess(
  processes: readonly CandidateProcess[],
  timeoutMs: number,
  sinceMs = -Infinity,
): Promise<CandidateProcess> {
  const leader = () =>
    processes.find(
      (p) =>
        !p.exitStatus &&
        p.killed?.signal !== 'SIGKILL' &&
        (p.termStarted?.monotonicMs ?? -Infinity) > sinceMs,
    );
  return eventually(
    () =>
      found(
        leader(),
        () =>
          `no leader (since ${sinceMs} ms) within ${timeoutMs} ms:\n${describeProcesses(processes)}`,
      ),
    { timeoutMs, intervalMs: 20 },
  );
}

/** Each process described, with its stderr tail: for failure messages. */
export function describeProcesses(processes: readonly CandidateProcess[]): string {
  return processes.map((p) => `${p.describe()}\n${p.stderrTail}`).join('\n');
}
