/**
 * Starts the real kube-apiserver + embedded etcd of `test/control-plane` as a child
 * process and describes it: kubeconfigs per identity, tokens, audit log, stop/restart.
 * With `KUBEBUILDER_ASSETS` set, the envtest `kube-apiserver` and `etcd` found there are used
 * instead of the built-in ones (the launcher is still built: it generates PKI and tokens).
 *
 * The Go binary is built (and cached) by `scripts/control-plane.sh`; a cold build takes
 * minutes, so the first call may be slow. Nothing here skips: if the server cannot start,
 * the promise rejects with the server's log tail.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ControlPlaneProcess,
  startControlPlaneProcess,
} from '@nest-leader/demo/launcher/control-plane-process';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The identities the control plane creates by default (`system:serviceaccount:default:<name>`). */
export const DEFAULT_IDENTITIES = ['alice', 'bob', 'carol', 'dave', 'nobody'] as const;

/** One authenticated user of the test cluster. */
export interface ClusterIdentity {
  /** Kubernetes user name, e.g. `system:serviceaccount:default:alice`. */
  username: string;
  /** A kubeconfig whose current context is this identity. */
  kubeconfigPath: string;
}

/** Serializable description of a running test cluster (shared with test files as JSON). */
export interface ClusterInfo {
  /** Where it came from: our own control plane, or an external `TEST_KUBECONFIG` cluster. */
  source: 'control-plane' | 'external';
  /** Admin kubeconfig (system:masters). */
  kubeconfigPath: string;
  /** Namespace the tests should use (fresh per run on an external cluster). */
  namespace: string;
  /** Named identities without cluster-admin rights; empty on an external cluster. */
  identities: Record<string, ClusterIdentity>;
  /** JSON-lines audit log of coordination.k8s.io requests, if available. */
  auditLogPath?: string;
  /** API server URL, e.g. `https://127.0.0.1:41234`. */
  url: string;
  /** Our control plane's state directory (etcd data, certificates, logs). */
  stateDir?: string;
}

interface ServerJson {
  url: string;
  port: number;
  kubeconfig: string;
  auditLog: string;
  stateDir: string;
  logFile: string;
}

/** A running control plane owned by this process. */
export interface ControlPlane extends ClusterInfo {
  /** Port on 127.0.0.1; kept across {@link ControlPlane.restart}. */
  port: number;
  /** Stops kube-apiserver and etcd (SIGTERM, then SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
  /** Stops and starts again on the same etcd data, port, certificates and tokens. */
  restart(): Promise<void>;
}

/** Options of {@link startControlPlane}. */
export interface StartControlPlaneOptions {
  /** State directory; default a fresh temporary directory. */
  stateDir?: string;
  /** Port to listen on; default a free one. */
  port?: number;
  /** How long to wait for the `KUBECONFIG=` line, ms; default 20 minutes (covers a cold build). */
  startTimeoutMs?: number;
  /**
   * Further kube-apiserver flags (after `--`), e.g. {@link COORDINATED_ELECTION_APISERVER_ARGS};
   * kept across {@link ControlPlane.restart}.
   */
  apiserverArgs?: readonly string[];
}

/**
 * The kube-apiserver flags of coordinated leader election (KEP-4355; beta, off by default
 * through 1.36): the feature gate runs the election controller inside kube-apiserver, the
 * runtime config serves `coordination.k8s.io/v1beta1` LeaseCandidates. Only the tests of
 * coordinated mode start a control plane with them.
 */
export const COORDINATED_ELECTION_APISERVER_ARGS: readonly string[] = [
  '--feature-gates=CoordinatedLeaderElection=true',
  '--runtime-config=coordination.k8s.io/v1beta1=true',
];

/**
 * Builds (cached) and starts `test/control-plane`, resolving once kube-apiserver's `/readyz`
 * is ok.
 *
 * @throws Error with the server's stderr tail when it exits or does not become ready in time.
 */
export async function startControlPlane(
  options: StartControlPlaneOptions = {},
): Promise<ControlPlane> {
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'nest-leader-cp-'));
  const startTimeoutMs = options.startTimeoutMs ?? 20 * 60_000;
  const apiserverArgs = options.apiserverArgs ?? [];
  let server = await launch(stateDir, options.port, startTimeoutMs, apiserverArgs);
  const info = JSON.parse(readFileSync(join(stateDir, 'server.json'), 'utf8')) as ServerJson;

  const identities: Record<string, ClusterIdentity> = {};
  for (const name of DEFAULT_IDENTITIES) {
    identities[name] = {
      username: `system:serviceaccount:default:${name}`,
      kubeconfigPath: join(stateDir, `kubeconfig-${name}`),
    };
  }

  const plane: ControlPlane = {
    source: 'control-plane',
    kubeconfigPath: info.kubeconfig,
    namespace: 'default',
    identities,
    auditLogPath: info.auditLog,
    url: info.url,
    stateDir,
    port: info.port,
    stop: (timeoutMs = 30_000) => server.stop(timeoutMs),
    async restart() {
      await server.stop(30_000);
      server = await launch(stateDir, info.port, startTimeoutMs, apiserverArgs);
    },
  };
  return plane;
}

/** Starts `scripts/control-plane.sh run` on `stateDir`; resolves once it is ready. */
function launch(
  stateDir: string,
  port: number | undefined,
  startTimeoutMs: number,
  apiserverArgs: readonly string[],
): Promise<ControlPlaneProcess> {
  const args = envtestArgs();
  if (port !== undefined) args.push('--port', String(port));
  if (apiserverArgs.length > 0) args.push('--', ...apiserverArgs);
  return startControlPlaneProcess({ stateDir, args, startTimeoutMs, progress: reportProgress });
}

/**
 * The build script's own progress lines (what it builds, how long it usually takes, a line
 * every 30 s of a cold build) always reach the console; the server's log only with
 * `CONTROL_PLANE_VERBOSE` set.
 */
function reportProgress(line: string): void {
  if (process.env.CONTROL_PLANE_VERBOSE) process.stderr.write(`${line}\n`);
  else if (line.startsWith('control-plane.sh: ') && !line.includes('up to date')) {
    process.stderr.write(`# ${line}\n`);
  }
}

/**
 * With `KUBEBUILDER_ASSETS` set (an envtest asset directory), its `kube-apiserver` and `etcd`
 * run as children of our launcher, which still generates the PKI, tokens and kubeconfigs.
 *
 * @throws Error naming the missing file when the directory lacks either binary.
 */
function envtestArgs(): string[] {
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (!assets) return [];
  const apiserver = resolve(assets, 'kube-apiserver');
  const etcd = resolve(assets, 'etcd');
  for (const file of [apiserver, etcd]) {
    if (!existsSync(file)) {
      throw new Error(`KUBEBUILDER_ASSETS=${assets}: ${file} does not exist`);
    }
  }
  return ['--kube-apiserver-binary', apiserver, '--etcd-binary', etcd];
}
