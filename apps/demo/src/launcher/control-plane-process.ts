/**
 * `pnpm demo --kube` without a cluster: runs the repository's real kube-apiserver + etcd
 * (`scripts/control-plane.sh run`), which prints `KUBECONFIG=<path>` once ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs from apps/demo/dist/launcher). */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** A control plane started by the launcher. */
export interface ControlPlaneProcess {
  /** Its admin kubeconfig. */
  kubeconfigPath: string;
  /** SIGTERM, then wait for it to exit (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Starts the control plane with its state in `stateDir` (reused across runs) and resolves once
 * it is ready. The first run builds it from source, which takes minutes: its progress goes to
 * `progress` line by line.
 * @throws Error with its last output if it exits (or `signal` stops it) before it is ready.
 */
export function startControlPlane(
  stateDir: string,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<ControlPlaneProcess> {
  // Own process group, like the replicas: on Ctrl-C the launcher stops the replicas first
  // (they release the Lease through this API server), then the control plane.
  const child = spawn('bash', ['scripts/control-plane.sh', 'run', '--state-dir', stateDir], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const tail: string[] = [];
  let ready = false;
  createInterface({ input: child.stderr! }).on('line', (line) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    if (!ready) progress(line);
  });
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(
        new Error(
          `the control plane exited before it was ready (code ${code}, signal ${signal}):\n${tail.join('\n')}`,
        ),
      );
    child.once('exit', onExit);
    signal?.addEventListener(
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
