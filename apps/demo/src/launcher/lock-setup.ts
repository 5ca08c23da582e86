/**
 * Where the local demo's replicas keep their lock: a file lock in the run's directory, or a
 * Lease — on $KUBECONFIG's cluster, else on the local control plane (started here, with the
 * demo's own RBAC from deploy/ and the replicas running as its ServiceAccount).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { DemoCliOptions } from './demo-cli.js';
import {
  applyManifests,
  DEMO_NAMESPACE,
  DEMO_SERVICE_ACCOUNT,
  loadDemoManifests,
} from './demo-manifests.js';
import { serviceAccountKubeConfig } from './kube-access.js';
import {
  type ControlPlaneProcess,
  REPO_ROOT,
  startControlPlaneProcess,
} from './control-plane-process.js';
import { say } from './demo-say.js';

/** Where the replicas' Lease lives and how they reach it. */
export interface LockSetup {
  /** Environment for every replica. */
  env: Record<string, string | undefined>;
  /** Human description for the header. */
  description: string;
  /** With --kube: reads the Lease for the status line. */
  lease?: { kc: KubeConfig; namespace: string };
  controlPlane?: ControlPlaneProcess;
}

export async function setUpFileLock(options: DemoCliOptions, runDir: string): Promise<LockSetup> {
  const lockDir = join(runDir, 'lock');
  // 0700: FileLock refuses a directory its group or others could write (a umask of 002 would
  // otherwise make it 0775).
  mkdirSync(lockDir, { recursive: true, mode: 0o700 });
  return {
    // `file` rather than `auto`: on a machine with a ~/.kube/config, `auto` would pick that
    // cluster, and `pnpm demo` must never write a Lease into someone's real cluster.
    env: { LEADER_LOCK: 'file', LEADER_LOCK_DIR: lockDir, KUBECONFIG: undefined },
    description: `file lock in ${relative(process.cwd(), lockDir) || lockDir} (lease ${options.leaseName})`,
  };
}

export async function setUpKube(options: DemoCliOptions, signal: AbortSignal): Promise<LockSetup> {
  const kubeconfig = process.env.KUBECONFIG;
  if (kubeconfig) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const namespace =
      options.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
    return {
      env: { LEADER_LOCK: 'kubernetes', KUBECONFIG: kubeconfig, LEASE_NAMESPACE: namespace },
      description: `Lease ${namespace}/${options.leaseName} on ${kc.getCurrentCluster()?.server} (KUBECONFIG, your credentials)`,
      lease: { kc, namespace },
    };
  }

  const stateDir = join(REPO_ROOT, '.demo', 'control-plane');
  say(
    `no KUBECONFIG: starting the local kube-apiserver + etcd (state in ${relative(process.cwd(), stateDir)})`,
  );
  say('the first start builds it from source; that takes several minutes');
  // Its own process group, like the replicas: on Ctrl-C the launcher stops the replicas first
  // (they release the Lease through this API server), then the control plane.
  let starting = true; // its progress until it is ready, not the server's log after
  const controlPlane = await startControlPlaneProcess({
    stateDir,
    progress: (line) => starting && say(`  ${line}`),
    signal,
    detached: true,
  });
  starting = false;
  try {
    const admin = new KubeConfig();
    admin.loadFromFile(controlPlane.kubeconfigPath);
    const namespace = options.namespace ?? DEMO_NAMESPACE;
    // The demo's own RBAC from deploy/: Namespace, ServiceAccount, Role (create on leases;
    // get/update/watch on this Lease) and RoleBinding. The replicas then run as that
    // ServiceAccount, like pods.
    const rbac = loadDemoManifests({
      namespace,
      kinds: ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding'],
      leaseName: options.leaseName,
    });
    const applied = await applyManifests(admin, rbac);
    say(`applied ${applied.map((a) => `${a.kind}/${a.name}`).join(', ')} from apps/demo/deploy`);
    const sa = await serviceAccountKubeConfig(admin, namespace, DEMO_SERVICE_ACCOUNT);
    const saKubeconfig = join(REPO_ROOT, '.demo', `kubeconfig-${DEMO_SERVICE_ACCOUNT}`);
    writeFileSync(saKubeconfig, sa.exportConfig(), { mode: 0o600 });
    return {
      env: { LEADER_LOCK: 'kubernetes', KUBECONFIG: saKubeconfig, LEASE_NAMESPACE: namespace },
      description:
        `Lease ${namespace}/${options.leaseName} on ${admin.getCurrentCluster()?.server}, ` +
        `as system:serviceaccount:${namespace}:${DEMO_SERVICE_ACCOUNT}`,
      lease: { kc: admin, namespace },
      controlPlane,
    };
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
}
