/**
 * Plumbing shared by the observers that write to the Kubernetes API (Events, pod labels):
 * client-node loaded on first use, a per-request timeout, and a one-word classification of a
 * failure for log lines and de-duplication.
 */
import type * as ClientNode from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from '../errors.js';

/** The `@kubernetes/client-node` module. */
export type ClientNodeModule = typeof ClientNode;

/** `@kubernetes/client-node`, imported on first use (observers are built before any write). */
export function importClientNode(): Promise<ClientNodeModule> {
  return import('@kubernetes/client-node');
}

/**
 * `requestTimeoutMs` with its default applied.
 * @throws InvalidLeaderElectionOptionError unless it is a positive finite number.
 */
export function validateRequestTimeoutMs(value: number | undefined, defaultMs: number): number {
  const timeoutMs = value ?? defaultMs;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new InvalidLeaderElectionOptionError(
      'requestTimeoutMs',
      'must be a positive number of milliseconds',
      timeoutMs,
    );
  }
  return timeoutMs;
}

/** Request options that abort the HTTP request after `timeoutMs`. */
export function timeoutOptions(
  k8s: ClientNodeModule,
  timeoutMs: number,
): ClientNode.ConfigurationOptions {
  const signal = AbortSignal.timeout(timeoutMs);
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(signal);
          return new k8s.Observable(Promise.resolve(context));
        },
        post: (response) => new k8s.Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/**
 * `forbidden`, `unauthorized`, `not-found`, `invalid`, `conflict`, `transient` (429, 5xx,
 * network) or `timeout`, as the locks classify Lease requests.
 */
export function failureKind(k8s: ClientNodeModule, error: unknown): string {
  if (error instanceof k8s.ApiException) {
    const code = error.code;
    if (code === 401) return 'unauthorized';
    if (code === 403) return 'forbidden';
    if (code === 404) return 'not-found';
    if (code === 409) return 'conflict';
    if (code === 408 || code === 429 || code >= 500) return 'transient';
    return 'invalid';
  }
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === 'AbortError' || name === 'TimeoutError' ? 'timeout' : 'transient';
}

/**
 * One line about a failure: the HTTP status and the API server's `Status.message` for an
 * `ApiException` (whose own message carries the whole body and headers), else the message.
 */
export function failureText(k8s: ClientNodeModule, error: unknown): string {
  if (error instanceof k8s.ApiException) {
    let message: unknown;
    try {
      const body = error.body as unknown;
      message = (typeof body === 'string' ? JSON.parse(body) : body)?.message;
    } catch {
      message = undefined;
    }
    return `HTTP ${error.code}${typeof message === 'string' ? `: ${message}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
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

  /** Reports a failure of `kind`, with `message` built only when it is logged. */
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
  push(job: () => Promise<void>, onError: (error: unknown) => void | Promise<void>): void {
    this.tail = this.tail.then(() => job().catch(onError)).catch(() => undefined);
  }

  /** Resolves when every job queued so far has finished. Never rejects. */
  idle(): Promise<void> {
    return this.tail;
  }
}
