/**
 * FileLock candidates as real OS processes (`file-candidate.ts`), seen from the test: their
 * events on one CLOCK_MONOTONIC time line, whether they lead, and how they ended.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { eventually, found } from './eventually.js';

const FIXTURE = fileURLToPath(new URL('./file-candidate.js', import.meta.url));

/** One JSON line of a candidate process. */
export interface FileCandidateEvent {
  event: 'started' | 'stopped' | 'log' | 'exit';
  identity: string;
  leaseTransitions?: number;
  level?: string;
  message?: string;
  /** CLOCK_MONOTONIC, ms. */
  monotonicMs: number;
}

/** Options of {@link startFileCandidate}. */
export interface FileCandidateOptions {
  /** Lease, renew deadline, retry period in seconds; default 2 / 1.5 / 0.5. */
  timings?: [number, number, number];
  /** A command and arguments to run the candidate under, e.g. `['unshare', '-p', '-f']`. */
  wrapper?: string[];
}

/** A running (or exited) candidate process. */
export interface FileCandidate {
  identity: string;
  child: ChildProcess;
  events: FileCandidateEvent[];
  /** True between its `started` and `stopped` events. */
  leading: boolean;
  /** leaseTransitions of every term it started, in order. */
  starts: number[];
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

/** Every candidate not yet exited: killed when the test process exits, so none is orphaned. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Spawns a candidate on the lease file `path`. */
export function startFileCandidate(
  path: string,
  identity: string,
  options: FileCandidateOptions = {},
): FileCandidate {
  const timings = (options.timings ?? [2, 1.5, 0.5]).map(String);
  const [command, ...args] = [
    ...(options.wrapper ?? []),
    process.execPath,
    FIXTURE,
    path,
    identity,
    ...timings,
  ];
  const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(child);
  const candidate: FileCandidate = {
    identity,
    child,
    events: [],
    leading: false,
    starts: [],
    exited: new Promise((resolve) =>
      child.once('exit', () => {
        running.delete(child);
        resolve();
      }),
    ),
  };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const event = JSON.parse(line) as FileCandidateEvent;
    candidate.events.push(event);
    if (event.event === 'started') {
      candidate.leading = true;
      candidate.starts.push(event.leaseTransitions!);
    }
    if (event.event === 'stopped') candidate.leading = false;
  });
  return candidate;
}

/** The first event of `candidate` matching `predicate`, waiting up to `timeoutMs` for it. */
export async function waitForEvent(
  candidate: FileCandidate,
  predicate: (event: FileCandidateEvent) => boolean,
  timeoutMs: number,
): Promise<FileCandidateEvent> {
  const seen = () => candidate.events.map((e) => e.message ?? e.event).join('\n  ');
  return eventually(
    () =>
      found(
        candidate.events.find(predicate),
        () => `${candidate.identity}: no such event within ${timeoutMs} ms; saw:\n  ${seen()}`,
      ),
    { timeoutMs, intervalMs: 10 },
  );
}
