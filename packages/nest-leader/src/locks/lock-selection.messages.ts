/** The texts of `lock-selection.ts` about test runners. */
export const testRunnerMessages = {
  memoryLockChosen: (runner: string) =>
    `No Kubernetes cluster configured and running under ${runner}: electing on a memory lock ` +
    'private to this process (it leads at once), so tests never join the file lock of a dev ' +
    "server running from the same project. Set lock: 'file' to share the file lock instead.",
};

/** Texts of lock selection (`LOCK_KINDS` in `locks/lock-selection.ts`). */
export const lockSelectionMessages = {
  autoSummary:
    'a Kubernetes Lease when any Kubernetes configuration exists (kubeConfig option, ' +
    'KUBECONFIG, in-cluster ServiceAccount token or KUBERNETES_SERVICE_HOST, ~/.kube/config), ' +
    'a file lock only when none does (a memory lock under Jest or Vitest)',
  kubernetesSummary: 'a coordination.k8s.io/v1 Lease; fails at startup without a configuration',
  configmapSummary:
    "client-go's historical record in a ConfigMap annotation (legacy fleets); fails at startup " +
    'without a configuration',
  fileSummary:
    "a file in this project's directory under the OS temp directory, shared by this project's replicas on this host only",
  memorySummary: 'a lock in this process only: always leader (tests)',
  fileLockChosen: (lock: string) =>
    'No Kubernetes cluster configured (KUBECONFIG unset, no in-cluster ServiceAccount token ' +
    `or KUBERNETES_SERVICE_HOST, no ~/.kube/config): electing on ${lock}, which only ` +
    "replicas on this host share. Set lock: 'file' to say so explicitly.",
  kubeConfigIgnored: (kind: string) =>
    `The kubeConfig option is ignored: lock '${kind}' does not use Kubernetes.`,
  noClusterRule:
    "'kubernetes' needs a cluster: none found (KUBECONFIG unset, no in-cluster ServiceAccount " +
    "token or KUBERNETES_SERVICE_HOST, no ~/.kube/config); pass kubeConfig, or use lock 'file' " +
    'outside Kubernetes',
  lockRule: (kinds: readonly string[]) =>
    `must be ${kinds.map((k) => `'${k}'`).join(', ')} or a ResourceLock (an object with ` +
    'description, get, create and update)',
} as const;
