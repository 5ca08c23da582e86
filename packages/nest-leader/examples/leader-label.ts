import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Injectable } from '@nestjs/common';
import { OnLeadershipAcquired, OnLeadershipLost } from 'nest-leader';

/**
 * Routes leader-only traffic with a pod label instead of readiness: the leader labels its own
 * pod `role=leader`, and a Service selects on it. Every pod stays Ready, so rollouts and
 * PodDisruptionBudgets behave normally. Needs RBAC `patch` on `pods` and POD_NAME/POD_NAMESPACE
 * from the downward API.
 */
@Injectable()
export class LeaderLabel {
  private readonly pods = makePodsApi();
  private readonly name = process.env.POD_NAME!;
  private readonly namespace = process.env.POD_NAMESPACE!;

  @OnLeadershipAcquired()
  async label(): Promise<void> {
    await this.setRole('leader');
  }

  @OnLeadershipLost()
  async unlabel(): Promise<void> {
    await this.setRole(null); // a merge patch with null removes the label
  }

  private async setRole(role: 'leader' | null): Promise<void> {
    await this.pods.patchNamespacedPod(
      { name: this.name, namespace: this.namespace, body: { metadata: { labels: { role } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
}

function makePodsApi(): CoreV1Api {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig.makeApiClient(CoreV1Api);
}
