import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { KubernetesApiError, LeaseApiError, LockConflictError } from 'nest-leader';
import {
  classifyKubernetesApiError,
  type KubernetesRequest,
} from '../../../dist/esm/kubernetes/api-errors.js';

const lease: KubernetesRequest = {
  verb: 'update',
  resource: 'leases.coordination.k8s.io',
  name: 'billing-worker',
  namespace: 'prod',
  identity: 'pod-a',
  lock: 'Lease prod/billing-worker',
  sent: true,
};

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason,
    message,
    code,
  });
}

function apiException(code: number, body: string): ApiException<string> {
  return new ApiException(code, `HTTP-Code: ${code}`, body, {});
}

/** A fetch failure as undici reports it: a TypeError whose cause carries the system code. */
function fetchFailure(code: string, message = code): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }) });
}

function classify(error: unknown, request: Partial<KubernetesRequest> = {}): Error {
  return classifyKubernetesApiError({ ...lease, ...request }, error);
}

describe('classifyKubernetesApiError', () => {
  test('a 403 is a forbidden LeaseApiError naming verb, resource, namespace, candidate and the RBAC fix', () => {
    const message =
      'leases.coordination.k8s.io "billing-worker" is forbidden: User "system:serviceaccount:prod:default" cannot update resource "leases"';

    const error = classify(apiException(403, status(403, 'Forbidden', message)));

    assert.ok(error instanceof LeaseApiError);
    assert.ok(error instanceof KubernetesApiError);
    assert.equal(error.kind, 'forbidden');
    assert.equal(error.statusCode, 403);
    assert.equal(error.verb, 'update');
    assert.equal(error.resource, 'leases.coordination.k8s.io');
    assert.equal(error.leaseName, 'billing-worker');
    assert.equal(error.transient, false);
    assert.match(
      error.message,
      /^Cannot update leases\.coordination\.k8s\.io "billing-worker" in namespace "prod" as candidate "pod-a"/,
    );
    assert.match(error.message, /verbs get, create and update on leases\.coordination\.k8s\.io/);
    assert.match(error.message, /Server said: .*cannot update resource "leases"\.$/);
  });

  test("a hostile server's message is one bounded line: no forged log lines, no 200 KB error", () => {
    const forged = `denied\n2026-01-01T00:00:00.000Z INFO forged line${'x'.repeat(200_000)}`;
    for (const body of [status(500, 'InternalError', forged), forged]) {
      const error = classify(apiException(500, body)) as KubernetesApiError;

      assert.equal(error.kind, 'transient');
      assert.doesNotMatch(error.message, /[\r\n]/);
      assert.ok(error.message.length < 1_500, `${error.message.length} characters`);
      assert.match(
        error.message,
        /denied 2026-01-01T00:00:00\.000Z INFO forged linex+… \(\d+ more characters\)/,
      );
    }
  });

  const statuses: Array<[number, string, boolean]> = [
    [401, 'unauthorized', false],
    [400, 'invalid', false],
    [422, 'invalid', false],
    [404, 'not-found', false],
    [408, 'transient', true],
    [429, 'transient', true],
    [500, 'transient', true],
    [503, 'transient', true],
  ];
  for (const [code, kind, transient] of statuses) {
    test(`HTTP ${code} is ${kind} (transient: ${transient})`, () => {
      const error = classify(apiException(code, status(code, 'X', `status ${code}`)), {
        verb: 'get',
      });

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, kind);
      assert.equal(error.statusCode, code);
      assert.equal(error.transient, transient);
    });
  }

  test('409 on create or update is a LockConflictError (a lost race), on get a conflict kind', () => {
    const conflict = apiException(409, status(409, 'Conflict', 'changed'));

    const onUpdate = classify(conflict, { verb: 'update' });
    const onCreate = classify(conflict, { verb: 'create' });
    const onGet = classify(conflict, { verb: 'get' });

    assert.ok(onUpdate instanceof LockConflictError);
    assert.equal(onUpdate.operation, 'update');
    assert.equal(onUpdate.lock, 'Lease prod/billing-worker');
    assert.ok(onCreate instanceof LockConflictError);
    assert.ok(onGet instanceof LeaseApiError);
    assert.equal(onGet.kind, 'conflict');
  });

  test('a 404 on create says the namespace probably does not exist', () => {
    const error = classify(
      apiException(404, status(404, 'NotFound', 'namespaces "prod" not found')),
      {
        verb: 'create',
      },
    );

    assert.ok(error instanceof LeaseApiError);
    assert.match(error.message, /Namespace "prod" probably does not exist/);
  });

  test('the resource is a parameter: a ConfigMap failure is a KubernetesApiError naming configmaps, not a LeaseApiError', () => {
    const error = classify(apiException(403, status(403, 'Forbidden', 'no')), {
      resource: 'configmaps',
      name: 'leader',
    });

    assert.ok(error instanceof KubernetesApiError);
    assert.ok(!(error instanceof LeaseApiError));
    assert.equal(error.resource, 'configmaps');
    assert.equal(error.objectName, 'leader');
    assert.match(error.message, /^Cannot update configmaps "leader" in namespace "prod"/);
    assert.match(error.message, /verbs get, create and update on configmaps in namespace "prod"/);
  });

  test("the API server's plain-text 400 to an http:// request on its HTTPS port is configuration", () => {
    const error = classify(apiException(400, 'Client sent an HTTP request to an HTTPS server.\n'));

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'configuration');
    assert.equal(error.transient, false);
    assert.match(error.message, /use https:\/\/ in the kubeconfig/);
  });

  test('a server certificate that does not verify against the CA is configuration, naming the code', () => {
    const error = classify(fetchFailure('UNABLE_TO_VERIFY_LEAF_SIGNATURE'));

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'configuration');
    assert.match(
      error.message,
      /TLS certificate was not accepted \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/,
    );
    assert.match(error.message, /certificate-authority/);
  });

  test('a refused connection is transient and the message shows the system code', () => {
    const error = classify(fetchFailure('ECONNREFUSED'));

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'transient');
    assert.match(error.message, /Cause: fetch failed \(ECONNREFUSED\)\.$/);
  });

  test("an abort by the caller's signal is a timeout", () => {
    const controller = new AbortController();
    controller.abort();

    const error = classifyKubernetesApiError(lease, new Error('aborted'), controller.signal);

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'timeout');
    assert.equal(error.transient, true);
  });

  describe('failures before the request was sent (applying the kubeconfig)', () => {
    test('a missing client certificate file is configuration naming the file', () => {
      const enoent = Object.assign(
        new Error("ENOENT: no such file or directory, open '/x/c.crt'"),
        {
          code: 'ENOENT',
          syscall: 'open',
          path: '/x/c.crt',
        },
      );

      const error = classify(enoent, { sent: false });

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, 'configuration');
      assert.match(error.message, /names a file that cannot be read: \/x\/c\.crt/);
    });

    test('an exec plugin that cannot be spawned is configuration about the exec plugin', () => {
      const spawnFailure = Object.assign(new Error('spawn kubelogin ENOENT'), {
        code: 'ENOENT',
        syscall: 'spawn kubelogin',
        path: 'kubelogin',
      });

      const error = classify(spawnFailure, { sent: false, execPlugin: true });

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, 'configuration');
      assert.match(error.message, /exec credential plugin .* failed/);
    });

    test("an exec plugin's non-zero exit (client-node rejects with its stderr) is configuration", () => {
      const error = classify(new Error('token expired\n'), { sent: false, execPlugin: true });

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, 'configuration');
      assert.match(error.message, /exec credential plugin/);
      assert.match(error.message, /Cause: token expired\.$/);
    });

    test('an http:// server URL without insecure-skip-tls-verify is configuration', () => {
      const error = classify(
        new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false'),
        { sent: false },
      );

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, 'configuration');
      assert.match(error.message, /use the https:\/\/ URL/);
    });

    test('the same errors after the request was sent are not blamed on the kubeconfig', () => {
      const error = classify(new Error('socket hang up'), { sent: true, execPlugin: true });

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, 'transient');
    });
  });
});

describe('classifyKubernetesApiError for requests that are not a lock’s (Events, pod labels)', () => {
  const event: KubernetesRequest = {
    verb: 'create',
    resource: 'events.events.k8s.io',
    name: 'billing-worker.1a2b',
    namespace: 'prod',
    identity: 'pod-a',
    sent: true,
  };

  test('a 409 is a KubernetesApiError of kind conflict, not a LockConflictError', () => {
    const error = classifyKubernetesApiError(
      event,
      apiException(409, status(409, 'AlreadyExists', 'exists')),
    );
    assert.ok(error instanceof KubernetesApiError);
    assert.ok(!(error instanceof LockConflictError));
    assert.equal(error.kind, 'conflict');
  });

  test('forbidden names the one verb to grant (create on Events, patch on pods)', () => {
    const forbidden = apiException(403, status(403, 'Forbidden', 'no'));
    const onEvents = classifyKubernetesApiError(event, forbidden);
    assert.match(
      onEvents.message,
      /grant the pod's ServiceAccount the verb create on events\.events\.k8s\.io in namespace "prod"/,
    );
    const onPod = classifyKubernetesApiError(
      { ...event, verb: 'patch', resource: 'pods', name: 'pod-a' },
      forbidden,
    );
    assert.match(onPod.message, /^Cannot patch pods "pod-a" in namespace "prod"/);
    assert.match(onPod.message, /the verb patch on pods in namespace "prod"/);
  });
});
