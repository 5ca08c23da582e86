/**
 * One demo replica as an OS process (`node apps/demo/dist/main.js`), seen from outside: its
 * JSON events as they arrive on stdout, its HTTP endpoints, signals and exit. Used by the
 * launcher (`pnpm demo`) and the end-to-end tests. Framework-free: no Nest here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  type DemoEvent,
  type LeaderStatus,
  parseDemoEvent,
  type ReplicaStartedEvent,
} from '../demo-events.js';

/** The compiled demo app. */
export const DEMO_MAIN = fileURLToPath(new URL('../main.js', import.meta.url));

/** A demo event and when this process received it (`performance.now()`, ms). */
export interface ReceivedEvent<E extends DemoEvent = DemoEvent> {
  event: E;
  receivedAt: number;
  replica: ReplicaProcess;
}

/** How a replica process ended. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** When it exited (`performance.now()`, ms). */
  at: number;
}

/** Options of {@link ReplicaProcess.start}. */
export interface ReplicaOptions {
  /** The replica's identity (POD_NAME), unique among the replicas. */
  identity: string;
  /** HTTP port; 0 picks a free one (read back from the `replica-started` event). */
  port: number;
  /** Environment on top of `baseEnv`; `undefined` values remove a variable. */
  env?: Record<string, string | undefined>;
  /** Base environment; default `process.env`. */
  baseEnv?: NodeJS.ProcessEnv;
  /** When set, stdout and stderr are also written to `<logDir>/<identity>.{out,err}.log`. */
  logDir?: string;
  /** The script to run; default the compiled demo ({@link DEMO_MAIN}). */
  main?: string;
}

/** An HTTP answer from a replica. */
export interface ReplicaResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

type EventListener = (received: ReceivedEvent) => void;

/** A running (or exited) demo replica. */
export class ReplicaProcess {
  readonly identity: string;
  /** Every demo event received so far, in arrival order. */
  readonly events: ReceivedEvent[] = [];
  /** Resolves when the process has exited. */
  readonly exited: Promise<ExitStatus>;
  /** Set once the process has exited. */
  exitStatus: ExitStatus | undefined;
  /** When the process was spawned (`performance.now()`, ms). */
  readonly spawnedAt = performance.now();

  private readonly child: ChildProcess;
  private readonly listeners = new Set<EventListener>();
  private portNumber: number;
  private stderrTailText = '';
  private readonly logs: WriteStream[] = [];

  private constructor(options: ReplicaOptions) {
    this.identity = options.identity;
    this.portNumber = options.port;
    const env: NodeJS.ProcessEnv = { ...(options.baseEnv ?? process.env) };
    for (const [key, value] of Object.entries({
      PORT: String(options.port),
      POD_NAME: options.identity,
      ...options.env,
    })) {
      if (value === undefined) delete env[key];
      else env[key] = value;
    }
    // Same process group as the caller: a Ctrl-C in the terminal, or CI killing the job,
    // reaches the replicas too, so none is left behind. A second signal from the caller
    // while a replica shuts down is harmless: Nest ignores it and finishes the first shutdown.
    this.child = spawn(process.execPath, [options.main ?? DEMO_MAIN], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out: WriteStream | undefined;
    let err: WriteStream | undefined;
    if (options.logDir) {
      out = createWriteStream(join(options.logDir, `${options.identity}.out.log`), { flags: 'a' });
      err = createWriteStream(join(options.logDir, `${options.identity}.err.log`), { flags: 'a' });
      this.logs.push(out, err);
    }
    const lines = createInterface({ input: this.child.stdout!, crlfDelay: Infinity });
    lines.on('line', (line) => {
      out?.write(`${line}\n`);
      const event = parseDemoEvent(line);
      if (!event) return;
      const received: ReceivedEvent = { event, receivedAt: performance.now(), replica: this };
      if (event.event === 'replica-started') this.portNumber = event.port;
      this.events.push(received);
      for (const listener of this.listeners) listener(received);
    });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      err?.write(chunk);
      this.stderrTailText = (this.stderrTailText + chunk.toString()).slice(-8000);
    });
    this.exited = new Promise<ExitStatus>((resolve) => {
      // 'close' (not 'exit'): every stdout line has been read by then.
      this.child.once('close', (code, signal) => {
        this.exitStatus = { code, signal, at: performance.now() };
        for (const log of this.logs) log.end();
        resolve(this.exitStatus);
      });
    });
  }

  /** Spawns a replica. Wait for {@link ReplicaProcess.started} before talking to it. */
  static start(options: ReplicaOptions): ReplicaProcess {
    return new ReplicaProcess(options);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The HTTP port (the real one once `replica-started` arrived). */
  get port(): number {
    return this.portNumber;
  }

  get running(): boolean {
    return this.exitStatus === undefined;
  }

  /** The last 8 kB of stderr (Nest's logs): for error messages. */
  get stderrTail(): string {
    return this.stderrTailText;
  }

  /** Calls `listener` for every event from now on; returns the unsubscribe function. */
  onEvent(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves with the first event, received at or after `since` (`performance.now()`;
   * default: any time), that satisfies `predicate`.
   * @throws Error after `timeoutMs`, or when the process exits first.
   */
  waitForEvent<E extends DemoEvent>(
    predicate: (event: DemoEvent) => event is E,
    options: { timeoutMs: number; since?: number; description?: string },
  ): Promise<ReceivedEvent<E>>;
  waitForEvent(
    predicate: (event: DemoEvent) => boolean,
    options: { timeoutMs: number; since?: number; description?: string },
  ): Promise<ReceivedEvent>;
  waitForEvent(
    predicate: (event: DemoEvent) => boolean,
    options: { timeoutMs: number; since?: number; description?: string },
  ): Promise<ReceivedEvent> {
    return waitForEventFrom([this], predicate, options);
  }

  /**
   * Waits until the replica listens.
   * @throws Error with its stderr tail if it exits or does not start within `timeoutMs`.
   */
  async started(timeoutMs = 30_000): Promise<ReplicaStartedEvent> {
    const { event } = await this.waitForEvent(
      (e): e is ReplicaStartedEvent => e.event === 'replica-started',
      { timeoutMs, description: `${this.identity} to start` },
    );
    return event;
  }

  /** Sends `signal`; returns when it was sent (`performance.now()`, ms). */
  kill(signal: NodeJS.Signals): number {
    const at = performance.now();
    if (this.running) this.child.kill(signal);
    return at;
  }

  /** Whether it reported `shutdown-started` (it got SIGTERM or SIGINT from anyone). */
  get shuttingDown(): boolean {
    return this.events.some((e) => e.event.event === 'shutdown-started');
  }

  /**
   * Graceful stop: SIGTERM (unless it is already shutting down), then SIGKILL if it has not
   * exited after `timeoutMs`. A replica already shutting down gets no second signal: once Nest
   * has finished it removes its signal listeners, and a signal landing between that and the
   * exit would kill the process by the signal's default action instead of exit status 0.
   * @returns how it exited.
   */
  async stop(timeoutMs = 20_000): Promise<ExitStatus> {
    if (!this.running) return this.exitStatus!;
    if (!this.shuttingDown) this.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), timeoutMs);
    const status = await this.exited;
    clearTimeout(timer);
    return status;
  }

  /** An HTTP request to this replica on 127.0.0.1; the body is parsed as JSON when it is JSON. */
  async request(
    path: string,
    init: { method?: string; timeoutMs?: number } = {},
  ): Promise<ReplicaResponse> {
    const response = await fetch(`http://127.0.0.1:${this.port}${path}`, {
      method: init.method ?? 'GET',
      signal: AbortSignal.timeout(init.timeoutMs ?? 2000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body };
  }

  /** GET /leader, or `undefined` if the replica does not answer. */
  async leaderStatus(timeoutMs = 1000): Promise<LeaderStatus | undefined> {
    try {
      const { status, body } = await this.request('/leader', { timeoutMs });
      return status === 200 ? (body as LeaderStatus) : undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * Resolves with the first event from any of `replicas`, received at or after `since`, that
 * satisfies `predicate` (events already received count).
 * @throws Error after `timeoutMs`, or when every replica has exited without a match.
 */
export function waitForEventFrom(
  replicas: readonly ReplicaProcess[],
  predicate: (event: DemoEvent, replica: ReplicaProcess) => boolean,
  options: { timeoutMs: number; since?: number; description?: string },
): Promise<ReceivedEvent> {
  const since = options.since ?? -Infinity;
  const matches = (r: ReceivedEvent) => r.receivedAt >= since && predicate(r.event, r.replica);
  const past = replicas
    .flatMap((replica) => replica.events)
    .filter(matches)
    .sort((a, b) => a.receivedAt - b.receivedAt)[0];
  if (past) return Promise.resolve(past);

  return new Promise<ReceivedEvent>((resolve, reject) => {
    const unsubscribe: (() => void)[] = [];
    const finish = (outcome: () => void) => {
      clearTimeout(timer);
      for (const off of unsubscribe) off();
      outcome();
    };
    const describe = options.description ?? 'a matching event';
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(new Error(`timed out after ${options.timeoutMs} ms waiting for ${describe}`)),
        ),
      options.timeoutMs,
    );
    for (const replica of replicas) {
      unsubscribe.push(
        replica.onEvent((received) => {
          if (matches(received)) finish(() => resolve(received));
        }),
      );
    }
    let running = replicas.filter((r) => r.running).length;
    const onExit = () => {
      running -= 1;
      if (running > 0) return;
      const tails = replicas
        .map(
          (r) =>
            `--- ${r.identity} (exit ${r.exitStatus?.code ?? r.exitStatus?.signal}), end of stderr:\n` +
            r.stderrTail.trimEnd().split('\n').slice(-5).join('\n'),
        )
        .join('\n');
      const who = replicas.length === 1 ? replicas[0]!.identity : 'every replica';
      finish(() => reject(new Error(`${who} exited while waiting for ${describe}\n${tails}`)));
    };
    for (const replica of replicas) {
      if (replica.running) void replica.exited.then(onExit);
    }
    if (running === 0) onExit();
  });
}
