/**
 * The sidecar's HTTP endpoints (`--http`), as the old `leader-elector` image's `GET /`, plus
 * a readiness-style and a liveness endpoint:
 *
 * - `GET /` → 200 `{"name":"<leader>","last_update":"<RFC 3339>"}`: the leader this candidate
 *   observes (`""` when none) and when it last saw the leader change (`null` before that).
 * - `GET /ready` → 200 on the leader, 503 elsewhere: {@link SidecarReadyResponse}.
 * - `GET /healthz` → 200, or 503 when the elector is unhealthy (as client-go's HealthzAdaptor).
 * - `POST /transfer?to=<identity>[&leaseDurationSeconds=<n>]` → targeted handoff
 *   (`LeaderElector.transferLeadership`): 200 {@link SidecarTransferResponse} once the Lease is
 *   handed to `to`; 400 for a missing or invalid `to` (empty, this candidate) or bound; 409 when
 *   this sidecar does not lead (or lost the Lease meanwhile); 502 when writing the Lease
 *   failed; 405 for any other method. Errors answer `{"error":"<message>"}`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LeaderElector } from '../core/leader-elector.js';
import { InvalidLeaderElectionOptionError, LeadershipTransferError } from '../errors.js';
import { sidecarMessages } from './sidecar.messages.js';

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

/** What `POST /transfer` answers with 200: the handoff was written. */
export interface SidecarTransferResponse {
  /** The candidate the Lease was handed to (its holderIdentity now). */
  to: string;
  /** How long the Lease is reserved for `to`: the handoff's bound, seconds. */
  leaseDurationSeconds: number;
  /** The handoff record's leaseTransitions (this sidecar's ended term + 1). */
  leaseTransitions: number | null;
}

/** Serves the elector's view over HTTP. */
export class SidecarServer {
  private readonly server: Server;
  private lastUpdate: Date | undefined;
  private lastLeader: string | undefined;

  /**
   * @param elector - the sidecar's elector
   * @param leaseDurationSeconds - its leaseDuration: a transfer's bound unless the request
   *   names one
   */
  constructor(
    private readonly elector: LeaderElector,
    private readonly leaseDurationSeconds: number,
  ) {
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
    const url = new URL(req.url ?? '/', 'http://sidecar');
    const path = url.pathname;
    if (path === '/transfer') {
      if (req.method !== 'POST') return send(res, 405, { error: 'POST only' }, { allow: 'POST' });
      return void this.transfer(url.searchParams, res);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(res, 405, { error: 'GET only' }, { allow: 'GET, HEAD' });
    }
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
        return send(res, 404, { error: sidecarMessages.noRoute(path) });
    }
  }

  /** `POST /transfer`: hands the term to `to` and answers once the handoff is written. */
  private async transfer(query: URLSearchParams, res: ServerResponse): Promise<void> {
    const to = query.get('to');
    // The sidecar advertises no preference: the target is always named.
    if (to === null) return send(res, 400, { error: sidecarMessages.transferNeedsTarget });
    const bound = query.get('leaseDurationSeconds');
    const leaseDurationSeconds = bound === null ? undefined : Number(bound);
    try {
      await this.elector.transferLeadership(to, { leaseDurationSeconds });
      const body: SidecarTransferResponse = {
        to,
        leaseDurationSeconds: leaseDurationSeconds ?? this.leaseDurationSeconds,
        leaseTransitions: this.elector.leaseTransitions ?? null,
      };
      send(res, 200, body);
    } catch (error) {
      send(res, transferStatus(error), { error: (error as Error).message });
    }
  }
}

/** HTTP status of a failed transfer: 400 bad request, 409 not (or no longer) leader, 502. */
function transferStatus(error: unknown): number {
  if (error instanceof InvalidLeaderElectionOptionError) return 400;
  if (error instanceof LeadershipTransferError && error.reason !== 'write-failed') return 409;
  return 502;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}
