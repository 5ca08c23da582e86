/**
 * Classification of failed `@kubernetes/client-node` calls, for every lock that stores its
 * record in a Kubernetes object (Lease today; the resource is a parameter). The kinds and what
 * each means are documented on `KubernetesApiErrorKind`.
 */
import {
  KubernetesApiError,
  type KubernetesVerb,
  LeaseApiError,
  LockConflictError,
} from '../errors.js';
import { LEASE_RESOURCE } from '../errors.messages.js';
import { boundedText } from '../format.js';
import { kubernetesConfigurationProblems } from './kubernetes.messages.js';
import { loadClientNode } from './client-node.loader.js';

/** The request that failed, as error messages and RBAC hints name it. */
export interface KubernetesRequest {
  /** The Kubernetes verb: `get`, `create`, `update`, or `patch` (pod labels). */
  verb: KubernetesVerb;
  /** The resource with its API group, as RBAC names it, e.g. `leases.coordination.k8s.io`. */
  resource: string;
  /** The object's name. */
  name: string;
  /** The object's namespace. */
  namespace: string;
  /** The candidate's identity, only to name it in messages. */
  identity?: string;
  /**
   * The lock's description (`Lease ns/name`): a 409 on its create/update is a
   * `LockConflictError`. Absent for requests that are not a lock's (Events, pod labels): a 409
   * is then a `KubernetesApiError` of kind `conflict`.
   */
  lock?: string;
  /**
   * False when the request never reached the HTTP layer: client-node failed while applying
   * the kubeconfig's credentials and TLS material (exec plugin, certificate files, a refused
   * `http://` URL). Such failures are `configuration`.
   */
  sent: boolean;
  /** True when the kubeconfig's current user authenticates with an exec credential plugin. */
  execPlugin?: boolean;
}

/** OpenSSL/Node codes of a server certificate that does not verify: a wrong CA or host name. */
const TLS_VERIFICATION_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The error a Kubernetes lock rejects with for `error`, thrown by a client-node call:
 * - 409 on a lock's `create`/`update` → `LockConflictError` (lost a race; the elector re-reads);
 * - an `ApiException` → by HTTP status (401 unauthorized, 403 forbidden, 404 not-found, 408,
 *   429 and 5xx transient, other 4xx invalid), except the API server's plain-text 400 to an
 *   `http://` request on its HTTPS port, which is `configuration`;
 * - a failure before the request was sent, or a TLS verification failure → `configuration`;
 * - the caller's `signal` aborted, or our per-request timeout → `timeout`;
 * - any other network failure → `transient`.
 *
 * Returns a {@link LeaseApiError} for `leases.coordination.k8s.io`, else a
 * {@link KubernetesApiError}, with `error` as its `cause`.
 */
export function classifyKubernetesApiError(
  request: KubernetesRequest,
  error: unknown,
  signal?: AbortSignal,
): LockConflictError | KubernetesApiError {
  const create = (
    kind: KubernetesApiError['kind'],
    statusCode: number | undefined,
    serverMessage: string | undefined,
    problem?: string,
  ): KubernetesApiError => {
    const details = {
      kind,
      verb: request.verb,
      name: request.name,
      namespace: request.namespace,
      identity: request.identity,
      statusCode,
      serverMessage,
      problem,
      // A lock needs all of get, create and update; any other request its own verb.
      rbacVerbs: request.lock === undefined ? [request.verb] : undefined,
    };
    return request.resource === LEASE_RESOURCE
      ? new LeaseApiError(details, { cause: error })
      : new KubernetesApiError({ ...details, resource: request.resource }, { cause: error });
  };

  if (error instanceof loadClientNode().ApiException) {
    const code = error.code;
    if (
      code === 409 &&
      request.lock !== undefined &&
      (request.verb === 'create' || request.verb === 'update')
    ) {
      return new LockConflictError(request.lock, request.verb, { cause: error });
    }
    const status = parseStatus(error.body);
    if (code === 400 && !status && /HTTP request to an HTTPS server/i.test(String(error.body))) {
      const problem = kubernetesConfigurationProblems.httpToHttps;
      return create('configuration', code, boundedText(String(error.body)), problem);
    }
    const message =
      status?.message === undefined ? rawBody(error.body) : boundedText(status.message);
    return create(statusKind(code), code, message);
  }
  const message = errorMessage(error);
  const problem = configurationProblem(error, request);
  if (problem) return create('configuration', undefined, message, problem);
  const timedOut =
    signal?.aborted ||
    (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError'));
  return create(timedOut ? 'timeout' : 'transient', undefined, message);
}

/** What to fix, when `error` shows the kubeconfig cannot work as written; else `undefined`. */
function configurationProblem(error: unknown, request: KubernetesRequest): string | undefined {
  const code = systemCode(error);
  if (code && TLS_VERIFICATION_CODES.has(code)) {
    return kubernetesConfigurationProblems.tlsVerification(code);
  }
  if (request.sent) return undefined;
  const failure = error as { code?: unknown; path?: unknown; syscall?: unknown; message?: unknown };
  if (typeof failure?.syscall === 'string' && failure.syscall.startsWith('spawn')) {
    return kubernetesConfigurationProblems.execPlugin;
  }
  if (failure?.code === 'ENOENT' || failure?.code === 'EACCES') {
    return kubernetesConfigurationProblems.missingFile(String(failure.path ?? ''));
  }
  if (
    typeof failure?.message === 'string' &&
    /HTTP protocol is not allowed/.test(failure.message)
  ) {
    return kubernetesConfigurationProblems.httpNotAllowed;
  }
  // client-node rejects with `new Error(stderr)` when an exec plugin exits non-zero; anything
  // else thrown before the request was sent also comes from applying the kubeconfig.
  return request.execPlugin
    ? kubernetesConfigurationProblems.execPlugin
    : kubernetesConfigurationProblems.requestNotPrepared;
}

/** The system error code of a fetch failure (its `cause`, or the cause's cause). */
function systemCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Classifies an HTTP status as the API server answered it. */
function statusKind(code: number): KubernetesApiError['kind'] {
  if (code === 401) return 'unauthorized';
  if (code === 403) return 'forbidden';
  if (code === 404) return 'not-found';
  if (code === 409) return 'conflict';
  if (code === 408 || code === 429 || code >= 500) return 'transient';
  return 'invalid';
}

/** A `Status` body (raw JSON text in client-node 2.x, or an object), else `undefined`. */
function parseStatus(body: unknown): { message?: string } | undefined {
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as unknown;
    if (typeof status !== 'object' || status === null) return undefined;
    const message = (status as { message?: unknown }).message;
    return { message: typeof message === 'string' ? message : undefined };
  } catch {
    return undefined;
  }
}

/**
 * A body that is not a Status (a proxy's HTML page, plain text): one line, bounded — it is the
 * server's text, not ours, and lands in logs.
 */
function rawBody(body: unknown): string | undefined {
  return typeof body === 'string' && body.trim() ? boundedText(body) : undefined;
}

/**
 * Message of a failure, with the system code (ECONNREFUSED, …) when fetch hides it: one line,
 * bounded (an exec credential plugin's failure carries its stderr).
 */
function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return boundedText(String(error));
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = [cause?.code, cause?.message].find((d) => typeof d === 'string' && d !== '');
  const message = error.message.trim() || `${error.name} without a message`;
  return boundedText(detail ? `${message} (${String(detail)})` : message);
}
