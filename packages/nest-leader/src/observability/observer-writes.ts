/**
 * Plumbing shared by the observers that write to the Kubernetes API (Events, pod labels): a failure classified as the locks classify theirs, one warning per
 * kind of failure, and a queue that keeps writes in order without ever blocking the election.
 */
import type { KubernetesApiError } from '../errors.js';
import { classifyKubernetesApiError, type KubernetesRequest } from '../kubernetes/api-errors.js';

/**
 * `error`, thrown by a client-node call, as a {@link KubernetesApiError}: its `kind`
 * (forbidden, transient, configuration, …) and a message naming the verb, resource, object and
 * what to fix, as `classifyKubernetesApiError` builds them for the locks.
 */
export function classifyObserverFailure(
  request: Omit<KubernetesRequest, 'lock'>,
  error: unknown,
): KubernetesApiError {
  return classifyKubernetesApiError(request, error) as KubernetesApiError;
}

/**
 * Logs the first failure of each kind as a warning and the rest at debug level: an observer
 * that cannot write (no RBAC, API server down) says so once, not at every leadership change.
 */
export class FailureReporter {
  private readonly warned = new Set<string>();

  constructor(
    private readonly logger: { warn(message: string): void; debug(message: string): void },
  ) {}

  /** Reports a failure of `kind`. */
  report(kind: string, message: string): void {
    if (this.warned.has(kind)) {
      this.logger.debug(message);
      return;
    }
    this.warned.add(kind);
    this.logger.warn(message);
  }
}

/** The logger observers use when none is given: warnings on the console, no debug. */
export const consoleWarnings = {
  warn: (message: string): void => console.warn(`[nest-leader] ${message}`),
  debug: (): void => undefined,
};

/**
 * Runs asynchronous jobs one after another; a failing job never stops the queue.
 * `idle()` resolves when everything queued so far has finished.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();

  /** Queues `job`; `onError` receives what it throws (and must not throw). */
  push(job: () => Promise<void>, onError: (error: unknown) => void): void {
    this.tail = this.tail.then(() => job().catch(onError)).catch(() => undefined);
  }

  /** Resolves when every job queued so far has finished. Never rejects. */
  idle(): Promise<void> {
    return this.tail;
  }
}
