/**
 * The sidecar's status endpoints (`--http`), as the old `leader-elector` image's `GET /`, plus
 * a readiness-style and a liveness endpoint. Read-only: they change nothing, so they may face
 * the pod network (the kubelet probes the pod IP). Transfers are served apart, off by default
 * (`sidecar-transfer.server.ts`).
 *
 * - `GET /` → 200 `{"name":"<leader>","last_update":"<RFC 3339>"}`: the leader this candidate
 *   observes (`""` when none) and when it last saw the leader change (`null` before that).
 * - `GET /ready` → 200 on the leader, 503 elsewhere: {@link SidecarReadyResponse}.
 * - `GET /healthz` → 200 `{"healthy":true}`, or 503 `{"healthy":false}` when the elector is
 *   unhealthy (as client-go's HealthzAdaptor); the reason goes to the log, not the network.
 * - 405 for other methods, 404 for other paths (`POST /transfer` here: 404 naming
 *   `--transfer-http`); any failure of a handler: 500 `{"error":"internal error"}`.
 *   Hardening (malformed targets, header size, timeouts, connection cap): `sidecar-http.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  ElectionLogger,
  LeaderElector,
  SidecarHealthResponse,
  SidecarLeaderResponse,
  SidecarReadyResponse,
} from 'nest-leader/core';
import { sidecarMessages } from './sidecar.messages.js';
import {
  requestPath,
  sendJson,
  SidecarHttpServer,
  type SidecarHttpLimits,
} from './sidecar-http.js';

/** Serves the elector's view over HTTP. */
export class SidecarServer {
  private readonly server: SidecarHttpServer;
  private lastUpdate: Date | undefined;
  private lastLeader: string | undefined;
  private lastHealthReason: string | undefined;

  /**
   * @param elector - the sidecar's elector
   * @param logger - where handler failures and the reason of an unhealthy answer go
   * @param limits - overrides of the HTTP limits (`SIDECAR_HTTP_LIMITS`)
   */
  constructor(
    private readonly elector: LeaderElector,
    private readonly logger: ElectionLogger,
    limits: Partial<SidecarHttpLimits> = {},
  ) {
    this.server = new SidecarHttpServer(
      '--http',
      (req, res) => this.handle(req, res),
      logger,
      limits,
    );
  }

  /** Records a change of leader (call from `onNewLeader` and when the leader becomes none). */
  noteLeader(identity: string | undefined): void {
    if (identity === this.lastLeader) return;
    this.lastLeader = identity;
    this.lastUpdate = new Date();
  }

  /** Listens on `host:port`; resolves the bound address (port 0 picks a free one). */
  listen(host: string, port: number): Promise<AddressInfo> {
    return this.server.listen(host, port);
  }

  /** Stops accepting connections and closes open ones. */
  close(): Promise<void> {
    return this.server.close();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = requestPath(req.url);
    if (path === '/transfer')
      return sendJson(res, 404, { error: sidecarMessages.transferElsewhere });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendJson(res, 405, { error: sidecarMessages.getOnly }, { allow: 'GET, HEAD' });
    }
    const name = this.elector.leader ?? '';
    this.noteLeader(this.elector.leader);
    switch (path) {
      case '/': {
        const body: SidecarLeaderResponse = {
          name,
          last_update: this.lastUpdate?.toISOString() ?? null,
        };
        return sendJson(res, 200, body);
      }
      case '/ready': {
        const term = this.elector.term; // undefined unless live by the local clock, now
        const body: SidecarReadyResponse = {
          leader: term !== undefined,
          name,
          leaseTransitions: term?.leaseTransitions ?? this.elector.leaseTransitions ?? null,
        };
        return sendJson(res, term ? 200 : 503, body);
      }
      case '/healthz': {
        const health = this.elector.health();
        // The reason may carry internal error text: logged once per change, never answered.
        if (health.reason !== this.lastHealthReason && health.reason !== undefined) {
          this.logger.warn(sidecarMessages.unhealthy(health.reason));
        }
        this.lastHealthReason = health.reason;
        const body: SidecarHealthResponse = { healthy: health.healthy };
        return sendJson(res, health.healthy ? 200 : 503, body);
      }
      default:
        return sendJson(res, 404, { error: sidecarMessages.noRoute });
    }
  }
}
