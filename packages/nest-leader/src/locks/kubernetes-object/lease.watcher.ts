/**
 * The watch of one Lease behind `LeaseLock.watch`: `GET …/leases?watch=true&fieldSelector=
 * metadata.name=<lease>` (RBAC `watch` on `leases`, which `resourceNames` can restrict to the
 * Lease, since the API server takes the name from that field selector), resumed from the last
 * resourceVersion seen, with bookmarks. client-node 2.x ends a watch after a period without
 * data and the server ends it after `timeoutSeconds`: both simply reconnect. `410 Gone` (the
 * version is too old) reconnects without a version, so the server first sends the Lease as it is
 * now (a re-read in the same request). A 403 stops watching for good (`onUnavailable`); other
 * failures reconnect with a capped exponential backoff.
 */
import type { KubeConfig, V1Lease } from '@kubernetes/client-node';
import { loadClientNode } from '../../kubernetes/client-node.loader.js';
import type { VersionedLeaseRecord } from '../resource-lock.js';
import type { LockWatch, LockWatchListener } from '../watchable-lock.js';

/** Options of `LeaseLock.watch`, for tests and diagnostics. */
export interface LeaseWatchOptions {
  /** resourceVersion to start from; default the last one the lock saw (none: the current state). */
  fromVersion?: string;
  /** Server-side timeout of each watch request; default a random 300–600 s. */
  timeoutSeconds?: number;
}

/** What the watcher needs from its `LeaseLock`. */
export interface LeaseWatchTarget {
  timeoutSeconds?: number;
  kubeConfig: KubeConfig;
  name: string;
  namespace: string;
  /**
   * Watch every Lease of the namespace (no field selector; RBAC `watch` on `leases` without
   * `resourceNames`), each delivered through `remember`: a sharded election's member Leases.
   */
  everyLease?: boolean;
  /** The resourceVersion of the Lease as last read or written by the lock, if any. */
  lastVersion(): string | undefined;
  /** Takes a watched object as the lock's latest (its metadata is kept on the next update). */
  remember(lease: V1Lease): VersionedLeaseRecord;
  /** Builds the error reported for a watch that failed with `statusCode` (or a network error). */
  watchError(statusCode: number | undefined, cause: unknown): Error;
}

/** Server-side watch timeout, randomized in [min, 2 × min) as client-go's reflectors do. */
const MIN_WATCH_TIMEOUT_SECONDS = 300;
/** client-node ends a watch after this long without data (bookmarks and renewals reset it). */
export const WATCH_IDLE_TIMEOUT_MS = 120_000;
const BACKOFF_INITIAL_MS = 500;
const BACKOFF_MAX_MS = 30_000;

/** Status codes after which watching cannot work without a configuration change. */
const PERMANENT_STATUS = new Set([403, 404, 405]);

interface WatchEnd {
  error?: unknown;
  statusCode?: number;
  gone?: boolean;
}

/**
 * Starts watching `target` until `signal` aborts; see the file's description.
 */
export function watchLease(
  target: LeaseWatchTarget,
  listener: LockWatchListener,
  signal: AbortSignal,
): LockWatch {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(target.namespace)}/leases`;
  /** The version to resume from: the last one seen in an event, bookmark or the lock's reads. */
  let version = target.lastVersion();
  let connection: AbortController | undefined;
  let reconnecting = false;
  let wakeBackoff: (() => void) | undefined;

  const watchOnce = (): Promise<WatchEnd> =>
    new Promise<WatchEnd>((resolve) => {
      const watch = new (loadClientNode().Watch)(target.kubeConfig);
      // client-node keeps this private; without it a quiet Lease would reconnect every 30 s.
      (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = WATCH_IDLE_TIMEOUT_MS;
      let gone = false;
      let ended = false;
      const query = {
        fieldSelector: target.everyLease ? undefined : `metadata.name=${target.name}`,
        allowWatchBookmarks: true,
        timeoutSeconds:
          target.timeoutSeconds ?? Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + Math.random())),
        resourceVersion: version,
      };
      const onEvent = (type: string, object: unknown) => {
        if (signal.aborted || ended) return;
        if (type === 'ERROR') {
          gone = (object as { code?: number } | undefined)?.code === 410;
          return;
        }
        const lease = object as V1Lease | undefined;
        version = lease?.metadata?.resourceVersion ?? version;
        if (type === 'ADDED' || type === 'MODIFIED') listener.onRecord(target.remember(lease!));
        else if (type === 'DELETED') listener.onRecord(undefined);
        // BOOKMARK: only the version moves.
      };
      const onDone = (error: unknown) => {
        if (ended) return;
        ended = true;
        connection = undefined;
        const statusCode = (error as { statusCode?: number } | undefined)?.statusCode;
        const idle = (error as { name?: string } | undefined)?.name === 'TimeoutError';
        const asked = reconnecting;
        reconnecting = false;
        gone ||= statusCode === 410;
        // Ended by the server, by client-node's idle timeout, by reconnect() or because the
        // version is too old (re-read at once): not a failure.
        const clean = !error || idle || asked || gone;
        resolve({ error: clean ? undefined : error, statusCode, gone });
      };
      watch
        .watch(path, query, onEvent, onDone)
        .then((controller) => {
          if (ended) return;
          connection = controller;
          if (signal.aborted) controller.abort();
          else listener.onConnected();
        })
        .catch(onDone);
    });

  const backoff = (delayMs: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        wakeBackoff = undefined;
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      signal.addEventListener('abort', done, { once: true });
      wakeBackoff = done;
    });

  const run = async () => {
    let failures = 0;
    while (!signal.aborted) {
      const end = await watchOnce();
      if (signal.aborted) return;
      if (end.gone) version = undefined;
      if (end.statusCode !== undefined && PERMANENT_STATUS.has(end.statusCode)) {
        listener.onUnavailable(target.watchError(end.statusCode, end.error));
        return;
      }
      listener.onDisconnected(
        end.error === undefined ? undefined : target.watchError(end.statusCode, end.error),
      );
      if (end.error === undefined) {
        failures = 0;
        continue;
      }
      failures++;
      const delayMs = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** (failures - 1));
      await backoff(delayMs * (0.5 + Math.random() / 2));
    }
  };
  signal.addEventListener('abort', () => connection?.abort(), { once: true });
  void run().catch((error: unknown) => listener.onUnavailable(error));

  return {
    reconnect() {
      if (connection) {
        reconnecting = true;
        connection.abort();
      } else {
        wakeBackoff?.();
      }
    },
  };
}
