/**
 * The cluster a chaos run uses: its own real kube-apiserver + etcd (test/control-plane, so the
 * harness may stop and restart it), the demo's own RBAC (ServiceAccount, Role, RoleBinding
 * from apps/demo/deploy), a TokenRequest token for that ServiceAccount (as a pod gets), and
 * toxiproxy in front of the API server: one proxy, and one kubeconfig, per replica slot.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import {
  applyManifests,
  DEMO_SERVICE_ACCOUNT,
  loadDemoManifests,
} from '@nest-leader/demo/launcher/demo-manifests';
import { serviceAccountKubeConfig } from '@nest-leader/demo/launcher/kube-access';
import { type ControlPlane, startControlPlane } from '../support/control-plane.js';
import { ReplicaLink } from './replica-link.js';
import { startToxiproxy, type ToxiproxyServer } from './toxiproxy-server.js';

/** Namespace of the chaos Lease. */
export const CHAOS_NAMESPACE = 'nest-leader-chaos';

export interface ChaosCluster {
  controlPlane: ControlPlane;
  toxiproxy: ToxiproxyServer;
  namespace: string;
  /** Admin access (the foreign writer, deleting the Lease, reading it). */
  admin: KubeConfig;
  /** The link of slot i and a kubeconfig (the demo's ServiceAccount) that goes through it. */
  links: { link: ReplicaLink; kubeconfigPath: string }[];
  /** Where the control plane and the kubeconfigs live. */
  dir: string;
  /** How long setting up took, ms, by step. */
  setupMs: Record<string, number>;
  /** Stops toxiproxy and the control plane and removes the temporary directory. */
  dispose(): Promise<void>;
}

/**
 * Starts everything; `slots` proxies and kubeconfigs.
 * @throws Error (with the cause's output) when the control plane or toxiproxy cannot start.
 */
export async function startChaosCluster(
  slots: number,
  leaseName: string,
  progress: (line: string) => void,
): Promise<ChaosCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-chaos-'));
  const setupMs: Record<string, number> = {};
  let started = performance.now();
  const step = (name: string) => {
    setupMs[name] = Math.round(performance.now() - started);
    started = performance.now();
  };
  const toxiproxy = await startToxiproxy(progress);
  step('toxiproxy');
  let controlPlane: ControlPlane | undefined;
  try {
    progress('starting kube-apiserver + etcd (test/control-plane; a cold build takes minutes)');
    controlPlane = await startControlPlane({ stateDir: join(dir, 'control-plane') });
    step('controlPlane');
    const admin = new KubeConfig();
    admin.loadFromFile(controlPlane.kubeconfigPath);
    const rbac = loadDemoManifests({
      namespace: CHAOS_NAMESPACE,
      kinds: ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding'],
      // The demo's Role names its Leases (resourceNames): grant this run's.
      leaseName,
    });
    await applyManifests(admin, rbac);
    // Twelve hours: the token must outlive the longest run (and survive API-server restarts:
    // the signing keys live in the state directory).
    const serviceAccount = await serviceAccountKubeConfig(
      admin,
      CHAOS_NAMESPACE,
      DEMO_SERVICE_ACCOUNT,
      12 * 3600,
    );
    step('rbac');
    const upstream = `127.0.0.1:${controlPlane.port}`;
    const links: ChaosCluster['links'] = [];
    for (let i = 0; i < slots; i++) {
      const link = await ReplicaLink.create(toxiproxy.client, `replica-${i}`, upstream);
      const kc = new KubeConfig();
      const cluster = serviceAccount.getCurrentCluster()!;
      const user = serviceAccount.getCurrentUser()!;
      const context = serviceAccount.getContextObject(serviceAccount.getCurrentContext())!;
      kc.loadFromOptions({
        clusters: [{ ...cluster, server: link.url }],
        users: [user],
        contexts: [context],
        currentContext: context.name,
      });
      const kubeconfigPath = join(dir, `kubeconfig-slot-${i}`);
      writeFileSync(kubeconfigPath, kc.exportConfig(), { mode: 0o600 });
      links.push({ link, kubeconfigPath });
    }
    step('links');
    const plane = controlPlane;
    return {
      controlPlane: plane,
      toxiproxy,
      namespace: CHAOS_NAMESPACE,
      admin,
      links,
      dir,
      setupMs,
      async dispose() {
        await toxiproxy.stop();
        await plane.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await toxiproxy.stop();
    await controlPlane?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
