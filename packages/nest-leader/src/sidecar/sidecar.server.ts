/**
 * The sidecar's HTTP endpoints (`--http`), as the old `leader-elector` image's `GET /`, plus
 * a readiness-style and a liveness endpoint:
 *
 * - `GET /` → 200 `{"name":"<leader>","last_update":"<RFC 3339>"}`: the leader this candidate
 *   observes (`""` when none) and when it last saw the leader change (`null` before that).
 * - `GET /ready` → 200 on the leader, 503 elsewhere: {@link SidecarReadyResponse}.
 * - `GET /healthz` → 200, or 503 when the elector is unhealthy (as client-go's HealthzAdaptor).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LeaderElector } from '../core/leader-elector.js';

/** What `GET /` answers. */
export interface SidecarLeaderResponse {
  /** The observed leader's identity; `""` when none is known. */
  name: string;
  /** When this candidate observed the leader change (RFC 3339), `null` before it saw one. */
  last_update: string | null;
}

/** What `GET /ready` answers (200 when `leader`, else 503). */
export interface SidecarReadyResponse {
  /** True only while this sidecar's term is live (re-checked at request time). */
  leader: boolean;
  /** The observed leader's identity; `""` when none is known. */
  name: string;
  /**
   * The live term's `leaseTransitions` (its fencing token) on the leader; on a follower the
   * value last observed in the Lease; `null` before the first read.
   */
  leaseTransitions: number | null;
}

/** Serves the elector's view over HTTP. */
export class SidecarServer {
  private readonly server: Server;
  private lastUpdate: Date | undefined;
  private lastLeader: string | undefined;

  constructor(private readonly elector: LeaderElector) {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  /** Records a change of leader (call from `onNewLeader` and when the leader becomes none). */
  noteLeader(identity: string | undefined): void {
    if (identity === this.lastLeader) return;
    this.lastLeader = identity;
    this.lastUpdate = new Date();
  }

  /** Listens on `host:port`; resolves the bound address (port 0 picks a free one). */
  async listen(host: string, port: number): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    return this.server.address() as AddressInfo;
  }

  /** Stops accepting connections and closes idle ones. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://sidecar').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'GET only' });
    const name = this.elector.leader ?? '';
    this.noteLeader(this.elector.leader);
    switch (path) {
      case '/': {
        const body: SidecarLeaderResponse = {
          name,
          last_update: this.lastUpdate?.toISOString() ?? null,
        };
        return send(res, 200, body);
      }
      case '/ready': {
        const term = this.elector.term; // undefined unless live by the local clock, now
        const body: SidecarReadyResponse = {
          leader: term !== undefined,
          name,
          leaseTransitions: term?.leaseTransitions ?? this.elector.leaseTransitions ?? null,
        };
        return send(res, term ? 200 : 503, body);
      }
      case '/healthz': {
        const health = this.elector.health();
        return send(res, health.healthy ? 200 : 503, health);
      }
      default:
        return send(res, 404, { error: `no route ${path}; try /, /ready or /healthz` });
    }
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}
