/**
 * The real one-node cluster of `scripts/cluster.sh` (kubelet + containerd + kube-proxy beside
 * the control plane), with the repository's own images, driven with the `kubectl` built into
 * the control-plane binary: what `pnpm demo --cluster` runs, and the cluster test tier too.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { REPO_ROOT } from './control-plane-process.js';

const run = promisify(execFile);

const controlPlaneBinary = join(REPO_ROOT, 'test/control-plane/.bin/control-plane');

/** A running node cluster. */
export interface NodeCluster {
  /** Admin kubeconfig, reached on 127.0.0.1 through the loopback forward. */
  kubeconfig: string;
  /** containerd's socket, for `ctr` (e.g. to kill a container as the runtime would). */
  containerdAddress: string;
  stateDir: string;
  /** The control-plane binary; `kubectl` is its first argument for kubectl. */
  kubectlBinary: string;
  /** `kubectl <args>` against this cluster; resolves with its stdout. */
  kubectl(...args: string[]): Promise<string>;
  /** `kubectl … -o json`, parsed as `T` (e.g. client-node's `V1PodList`; dates stay strings). */
  getJson<T>(...args: string[]): Promise<T>;
  /**
   * SIGTERM the cluster script and wait until it removed everything it started; then remove
   * the state directory, unless the caller chose it (`stateDir` option).
   */
  stop(): Promise<void>;
}

/**
 * Starts `scripts/cluster.sh run` (building the binary and images first when they are stale)
 * and resolves once it printed `KUBECONFIG=…`, i.e. the node is Ready.
 *
 * @throws Error with the script's last output lines when it exits or times out first: the tier
 *   fails loudly, it never skips.
 */
export async function startNodeCluster(
  options: { timeoutMs?: number; stateDir?: string; onProgress?: (line: string) => void } = {},
): Promise<NodeCluster> {
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'nest-leader-node-'));
  const progress = options.onProgress ?? ((line: string) => console.log(`# ${line}`));
  const child = spawn(
    'bash',
    [join(REPO_ROOT, 'scripts/cluster.sh'), 'run', '--state-dir', stateDir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const tail: string[] = [];
  const remember = (line: string) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    if (/^(cluster|images|control-plane)\.sh: /.test(line)) progress(line);
  };
  createInterface({ input: child.stderr! }).on('line', remember);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const kubeconfig = await new Promise<string>((done, fail) => {
    const timer = setTimeout(
      () =>
        fail(
          new Error(
            `the node cluster was not Ready within ${options.timeoutMs ?? 900_000} ms:\n${tail.join('\n')}`,
          ),
        ),
      options.timeoutMs ?? 900_000,
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      remember(line);
      const match = /^KUBECONFIG=(.+)$/.exec(line);
      if (match) {
        clearTimeout(timer);
        done(match[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(
        new Error(
          `scripts/cluster.sh exited (${code}) before the node was Ready:\n${tail.join('\n')}`,
        ),
      );
    });
  });
  const kubectl = async (...args: string[]) =>
    (
      await run(controlPlaneBinary, ['kubectl', '--kubeconfig', kubeconfig, ...args], {
        maxBuffer: 64 << 20,
      })
    ).stdout;
  return {
    kubeconfig,
    containerdAddress: join(stateDir, 'containerd/containerd.sock'),
    stateDir,
    kubectlBinary: controlPlaneBinary,
    kubectl,
    getJson: async <T>(...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json')) as T,
    // A state directory made here (images, containers, logs: about 1 GB) goes with the node.
    stop: async () => {
      await stopChild(child, exited);
      if (options.stateDir === undefined) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await exited;
}
