/**
 * What both of the sidecar's HTTP servers (the status server on `--http`, the transfer server
 * on `--transfer-http`) share: a Node HTTP server that no request can kill or exhaust, and the
 * JSON answer. Every request is hostile until proven otherwise: its target is not parsed as a
 * URL (Node's `URL` throws on `//` and `http://[`), a handler that throws or rejects answers
 * 500 with a fixed text (the error goes to the log, never to the network), headers are capped
 * (431), a client that does not finish its headers or request in time is cut off (408), and the
 * number of open connections is capped.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ElectionLogger } from 'nest-leader/core';
import { sidecarMessages } from './sidecar.messages.js';

/** Limits of a sidecar HTTP server; every field has a default (see {@link SIDECAR_HTTP_LIMITS}). */
export interface SidecarHttpLimits {
  /** Largest request head (request line + headers), bytes; a larger one answers 431. */
  maxHeaderSizeBytes: number;
  /** Time a client has to send the whole request head, ms; then 408 and the socket closes. */
  headersTimeoutMs: number;
  /** Time a client has to send the whole request (head and body), ms. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open, ms. */
  keepAliveTimeoutMs: number;
  /** How often Node checks the two timeouts above, ms (its default, 30 s, is too coarse). */
  connectionsCheckingIntervalMs: number;
  /** Open connections at most; further ones are closed at once until some end. */
  maxConnections: number;
}

/**
 * The defaults: an 8 KiB request head (probes and `curl` send a few hundred bytes), 5 s for the
 * head, 10 s for the request, 5 s keep-alive, checked every second, 64 connections.
 */
export const SIDECAR_HTTP_LIMITS: Readonly<SidecarHttpLimits> = {
  maxHeaderSizeBytes: 8 * 1024,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
  maxConnections: 64,
};

/** Handles one request; may throw or reject (the server then answers 500). */
export type SidecarRequestHandler = (
  req: IncomingMessage,
  res: ServerResponse,
) => void | Promise<void>;

/** An HTTP server for the sidecar, hardened as this file's description says. */
export class SidecarHttpServer {
  private readonly server: Server;

  /**
   * @param name - which server, for log lines (`--http`, `--transfer-http`)
   * @param handler - answers each request
   * @param logger - where failures go (never to the client)
   * @param limits - overrides of {@link SIDECAR_HTTP_LIMITS} (tests use short timeouts)
   */
  constructor(
    private readonly name: string,
    handler: SidecarRequestHandler,
    private readonly logger: ElectionLogger,
    limits: Partial<SidecarHttpLimits> = {},
  ) {
    const l = { ...SIDECAR_HTTP_LIMITS, ...limits };
    this.server = createServer(
      {
        maxHeaderSize: l.maxHeaderSizeBytes,
        headersTimeout: l.headersTimeoutMs,
        requestTimeout: l.requestTimeoutMs,
        keepAliveTimeout: l.keepAliveTimeoutMs,
        connectionsCheckingInterval: l.connectionsCheckingIntervalMs,
      },
      (req, res) => {
        try {
          const done = handler(req, res);
          if (done) done.catch((error: unknown) => this.fail(res, error));
        } catch (error) {
          this.fail(res, error);
        }
      },
    );
    this.server.maxConnections = l.maxConnections;
    // Malformed requests (bad request line, oversized head, timeouts) are answered by Node's
    // default clientError handling (400, 431, 408) and never reach the handler.
  }

  /** Listens on `host:port`; resolves the bound address (port 0 picks a free one). */
  async listen(host: string, port: number): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    // After binding, a server error (e.g. EMFILE while accepting) is logged, never fatal.
    this.server.on('error', (error) =>
      this.logger.error(sidecarMessages.serverError(this.name, error)),
    );
    return this.server.address() as AddressInfo;
  }

  /** Stops accepting connections and closes open ones. */
  async close(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private fail(res: ServerResponse, error: unknown): void {
    this.logger.error(sidecarMessages.requestFailed(this.name, error));
    if (res.headersSent) res.destroy();
    else sendJson(res, 500, { error: sidecarMessages.internalError });
  }
}

/**
 * The path of a request target, without its query, taken as text: never parsed as a URL (a
 * target such as `//` or `http://[` makes `new URL` throw).
 */
export function requestPath(target: string | undefined): string {
  const text = target ?? '/';
  const query = text.indexOf('?');
  return query < 0 ? text : text.slice(0, query);
}

/** Answers `status` with `body` as JSON (no caching, no content sniffing). */
export function sendJson(
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
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}
