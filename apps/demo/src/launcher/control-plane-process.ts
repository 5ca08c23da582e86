/**
 * The repository's real kube-apiserver + etcd (`scripts/control-plane.sh run`) as a child
 * process, which prints `KUBECONFIG=<path>` once ready: what `pnpm demo --kube` runs without a
 * cluster, and what test/support/control-plane.ts describes for the tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs from apps/demo/dist/launcher). */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** A control plane started by {@link startControlPlaneProcess}. */
export interface ControlPlaneProcess {
  /** Its admin kubeconfig. */
  kubeconfigPath: string;
  /** SIGTERM, then wait for it to exit (SIGKILL after `timeoutMs`, default 30 s). */
  stop(timeoutMs?: number): Promise<void>;
}

/** Options of {@link startControlPlaneProcess}. */
export interface ControlPlaneProcessOptions {
  /** Its state directory (etcd data, certificates, kubeconfigs); reused across runs. */
  stateDir: string;
  /** More arguments of `scripts/control-plane.sh run`, e.g. `['--port', '41234']`. */
  args?: readonly string[];
  /** Gets each line it writes to stderr: a cold build's progress, then the server's log. */
  progress?: (line: string) => void;
  /** Stops it if aborted before it is ready. */
  signal?: AbortSignal;
  /** How long to wait for it to be ready, in ms; default no limit. */
  startTimeoutMs?: number;
  /**
   * In its own process group, so that a Ctrl-C to the parent does not reach it and the parent
   * decides when it stops; default false.
   */
  detached?: boolean;
}

/**
 * Starts the control plane and resolves once it is ready. The first run builds it from source,
 * which takes minutes.
 * @throws Error with its last output if it exits (or `signal` stops it) before it is ready, or
 * is not ready within `startTimeoutMs` (then it is killed).
 */
export function startControlPlaneProcess(
  options: ControlPlaneProcessOptions,
): Promise<ControlPlaneProcess> {
  const args = ['scripts/control-plane.sh', 'run', '--state-dir', options.stateDir];
  const child = spawn('bash', [...args, ...(options.args ?? [])], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const tail: string[] = [];
  let ready = false;
  createInterface({ input: child.stderr! }).on('line', (line) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    options.progress?.(line);
  });
  return new Promise((resolve, reject) => {
    const timer =
      options.startTimeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            child.off('exit', onExit);
            child.kill('SIGKILL');
            reject(
              new Error(
                `the control plane was not ready after ${options.startTimeoutMs} ms:\n${tail.join('\n')}`,
              ),
            );
          }, options.startTimeoutMs);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      reject(
        new Error(
          `the control plane exited before it was ready (code ${code}, signal ${signal}):\n${tail.join('\n')}`,
        ),
      );
    };
    child.once('exit', onExit);
    options.signal?.addEventListener(
      'abort',
      () => {
        if (!ready) void stop(child);
      },
      { once: true },
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^KUBECONFIG=(.+)$/.exec(line);
      if (!match || ready) return;
      ready = true;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve({ kubeconfigPath: match[1]!, stop: (timeoutMs) => stop(child, timeoutMs) });
    });
  });
}

async function stop(child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}
