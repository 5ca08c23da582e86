/** The texts of `lock-selection.ts` about test runners (the rest are in `messages.ts`). */
export const testRunnerMessages = {
  memoryLockChosen: (runner: string) =>
    `No Kubernetes cluster configured and running under ${runner}: electing on a memory lock ` +
    'private to this process (it leads at once), so tests never join the file lock of a dev ' +
    "server running from the same project. Set lock: 'file' to share the file lock instead.",
};
