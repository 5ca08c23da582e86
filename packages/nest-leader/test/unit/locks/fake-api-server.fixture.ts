import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const LEASE_PATH = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/?]+))?/;

/** One request as the fake API server received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
}

type Override = { status: number; body: unknown } | 'hang';

/**
 * A tiny stand-in for kube-apiserver's Lease endpoints: get/create/replace with
 * resourceVersion checks, 409s, and MicroTime validation (six fractional digits, else 400)
 * like the real server. Tests can force the next response or make it hang.
 */
export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  /** Stored Leases by `namespace/name`. */
  readonly leases = new Map<string, Record<string, unknown>>();
  /** Requests that were still open when the client gave up. */
  abandoned = 0;
  private server: Server | undefined;
  private nextVersion = 100;
  private readonly overrides: Override[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'tester', token: 'secret-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'tester', namespace: 'default' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** Answers the next request with `status` and a Status body, or never (`'hang'`). */
  respondNext(override: Override): void {
    this.overrides.push(override);
  }

  /** Stores a Lease as another client would have written it. */
  put(namespace: string, name: string, lease: Record<string, unknown>): void {
    const metadata = {
      ...(lease.metadata as object),
      name,
      namespace,
      resourceVersion: String(this.nextVersion++),
    };
    this.leases.set(`${namespace}/${name}`, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      ...lease,
      metadata,
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    this.requests.push({ method: req.method!, path: req.url!, body });
    const override = this.overrides.shift();
    if (override === 'hang') {
      res.on('close', () => (this.abandoned += 1));
      return;
    }
    if (override) return send(res, override.status, override.body);

    const match = LEASE_PATH.exec(req.url!);
    if (!match) return send(res, 404, status(404, 'NotFound', 'no such path'));
    const [, namespace, name] = match;
    const key = `${namespace}/${name ?? (body?.metadata as { name?: string })?.name}`;
    const stored = this.leases.get(key);

    if (req.method === 'GET') {
      return stored
        ? send(res, 200, stored)
        : send(res, 404, status(404, 'NotFound', `leases "${name}" not found`));
    }
    const invalid = invalidMicroTimes(body);
    if (invalid) return send(res, 400, status(400, 'BadRequest', invalid));
    if (req.method === 'POST') {
      if (stored)
        return send(res, 409, status(409, 'AlreadyExists', `leases "${key}" already exists`));
      const metadata = body!.metadata as { name: string };
      this.put(namespace!, metadata.name, body!);
      return send(res, 201, this.leases.get(`${namespace}/${metadata.name}`));
    }
    if (req.method === 'PUT') {
      if (!stored) return send(res, 404, status(404, 'NotFound', `leases "${name}" not found`));
      const sent = (body!.metadata as { resourceVersion?: string }).resourceVersion;
      const current = (stored.metadata as { resourceVersion: string }).resourceVersion;
      if (sent !== current) {
        return send(
          res,
          409,
          status(
            409,
            'Conflict',
            'the object has been modified; please apply your changes to the latest version and try again',
          ),
        );
      }
      this.put(namespace!, name!, body!);
      return send(res, 200, this.leases.get(key));
    }
    return send(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
  }
}

function invalidMicroTimes(body: Record<string, unknown> | undefined): string | undefined {
  const spec = (body?.spec ?? {}) as Record<string, unknown>;
  for (const field of ['acquireTime', 'renewTime']) {
    const value = spec[field];
    if (value !== undefined && (typeof value !== 'string' || !MICRO_TIME.test(value))) {
      return `Lease in version "v1" cannot be handled as a Lease: invalid spec.${field} ${JSON.stringify(value)}`;
    }
  }
  return undefined;
}

/** A `metav1.Status` body. */
export function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code };
}

function send(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
