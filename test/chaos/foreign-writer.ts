/**
 * A foreign writer on the Lease: another controller (a GitOps sync, a label sync, someone's
 * `kubectl label`) that rewrites the Lease's labels on a period, with the admin's credentials.
 * It changes the object's resourceVersion and never the election record, so electors see
 * 409s and must not mistake its writes for renewals.
 */
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';

/** Label the writer sets (its value counts the writes). */
export const FOREIGN_LABEL = 'chaos.nest-leader.dev/foreign-write';

export class ForeignWriter {
  /** Successful writes. */
  writes = 0;
  /** Writes that lost a race (409) or found no Lease (404). */
  misses = 0;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly admin: KubeConfig,
    private readonly namespace: string,
    private readonly leaseName: string,
    /** Period between write attempts, ms. */
    readonly periodMs: number,
  ) {}

  /** Starts writing (the first write at once). */
  start(): this {
    this.loop = this.run();
    return this;
  }

  /** Stops and waits for the write in flight. */
  async stop(): Promise<void> {
    this.stopper.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const api = this.admin.makeApiClient(CoordinationV1Api);
    const { namespace, leaseName: name } = this;
    while (!this.stopper.signal.aborted) {
      const started = performance.now();
      try {
        const lease = await api.readNamespacedLease({ name, namespace });
        lease.metadata = {
          ...lease.metadata,
          labels: { ...lease.metadata?.labels, [FOREIGN_LABEL]: String(this.writes + 1) },
        };
        await api.replaceNamespacedLease({ name, namespace, body: lease });
        this.writes += 1;
      } catch {
        this.misses += 1; // 409 (lost a race), 404 (deleted), or the API server is down
      }
      const waitMs = this.periodMs - (performance.now() - started);
      if (waitMs > 0) {
        await sleep(waitMs, undefined, { signal: this.stopper.signal }).catch(() => undefined);
      }
    }
  }
}
