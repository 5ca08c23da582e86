/**
 * Polls an election record as stored (a Lease, or a ConfigMap's leader annotation) and keeps
 * every change of holder or transitions, stamped with CLOCK_MONOTONIC (`monotonicNowMs`), the
 * candidate harness's clock.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { TestLockKind } from './kubernetes-locks.js';
import { monotonicNowMs } from './monotonic-time.js';

/** The stored record's holder and transitions counter at one moment. */
export interface StoredRecord {
  holderIdentity: string;
  /** `leaseTransitions` (Lease) or `leaderTransitions` (annotation); undefined when absent. */
  transitions: number | undefined;
  atMs: number;
}

/** The annotation that holds client-go's historical election record. */
export const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

/** Reads the record of lock `kind` `name` as admin; `undefined` when there is none. */
export async function readStoredRecord(
  kubeConfig: KubeConfig,
  kind: TestLockKind,
  name: string,
  namespace: string,
): Promise<Omit<StoredRecord, 'atMs'> | undefined> {
  try {
    if (kind === 'lease') {
      const lease = await kubeConfig
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ name, namespace });
      return {
        holderIdentity: lease.spec?.holderIdentity ?? '',
        transitions: lease.spec?.leaseTransitions,
      };
    }
    const configMap = await kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name, namespace });
    const raw = configMap.metadata?.annotations?.[LEADER_ANNOTATION];
    if (!raw) return { holderIdentity: '', transitions: undefined };
    const record = JSON.parse(raw) as { holderIdentity?: string; leaderTransitions?: number };
    return { holderIdentity: record.holderIdentity ?? '', transitions: record.leaderTransitions };
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/**
 * Starts polling every `intervalMs`; `stop()` ends it. Failed polls are counted (`errors`,
 * with the last message), never silently dropped: a record it did not see is no evidence.
 */
export function recordLockHistory(
  kubeConfig: KubeConfig,
  kind: TestLockKind,
  name: string,
  namespace: string,
  intervalMs = 100,
) {
  const changes: StoredRecord[] = [];
  const counts = { polls: 0, errors: 0, lastError: undefined as string | undefined };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      counts.polls += 1;
      try {
        const now = await readStoredRecord(kubeConfig, kind, name, namespace);
        const last = changes.at(-1);
        if (
          now &&
          (last?.holderIdentity !== now.holderIdentity || last.transitions !== now.transitions)
        ) {
          changes.push({ ...now, atMs: monotonicNowMs() });
        }
      } catch (error) {
        // No evidence either way; the next poll reads again. Counted for failure messages.
        counts.errors += 1;
        counts.lastError = String((error as Error)?.message ?? error).slice(0, 200);
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    changes,
    /** Polls made and polls that failed (with the last failure's message). */
    counts,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
