/**
 * `POST /transfer` (`--transfer-http`): targeted handoff over HTTP, a privileged operation —
 * it decides who leads — served apart from the read-only status endpoints, off unless the
 * operator enables it, on loopback unless told otherwise (and then only behind a token).
 *
 * A request must pass, in this order (each refusal a JSON `{"error"}` answer):
 * 1. the path `/transfer` (404) and the method `POST` (405);
 * 2. with `--transfer-token-file`: `Authorization: Bearer <token>` (401);
 * 3. no `Origin` header (403): a browser sends one with every cross-site POST, and no
 *    operator's tool does — so a web page cannot order a transfer from a local sidecar;
 * 4. `Content-Type: application/json` (415): a type a cross-site form cannot send without a
 *    CORS preflight, which this server never grants;
 * 5. a body of at most 1 KiB (413) that is a JSON object `{"to", "leaseDurationSeconds"?}`
 *    with no other fields (400);
 * 6. `to` a valid candidate identity (400), this sidecar leading (409), `to` advertising
 *    itself on the Lease right now — read fresh (409; 502 when the read fails) — and the bound
 *    a whole number of seconds at most the election's leaseDuration (400, the core's rule).
 * Then the core's `LeaderElector.transferLeadership`: 200 {@link SidecarTransferResponse}
 * once written; 409 when the term ended meanwhile; 502 when writing failed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  acceptedHandoffSeconds,
  type ElectionLogger,
  InvalidLeaderElectionOptionError,
  type LeaderElector,
  LeadershipTransferError,
  MAX_TRANSFER_BODY_BYTES,
  type ResourceLock,
  type SidecarTransferRequest,
  type SidecarTransferResponse,
  validateIdentity,
} from 'nest-leader/core';
import { sidecarMessages } from './sidecar.messages.js';
import {
  requestPath,
  sendJson,
  SidecarHttpServer,
  type SidecarHttpLimits,
} from './sidecar-http.js';
import type { TransferToken } from './transfer-token.js';

/** What the transfer server needs. */
export interface SidecarTransferServerOptions {
  /** The sidecar's elector. */
  elector: LeaderElector;
  /** Its lock: read to check that the target advertises itself. */
  lock: ResourceLock;
  /** The election's leaseDuration, seconds: the default bound. */
  leaseDurationSeconds: number;
  /** The election's retryPeriod, ms: an accepted target's reservation is an offer window. */
  retryPeriodMs: number;
  /** Timeout of the Lease read, ms. */
  readTimeoutMs: number;
  /** When set, requests must present it (`Authorization: Bearer …`). */
  token?: TransferToken;
  /** Where refusals' causes and failures go. */
  logger: ElectionLogger;
  /** Overrides of the HTTP limits (`SIDECAR_HTTP_LIMITS`). */
  limits?: Partial<SidecarHttpLimits>;
}

/** A refusal: the HTTP status and the `{"error"}` text. */
class Refusal {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** Serves `POST /transfer`. */
export class SidecarTransferServer {
  private readonly server: SidecarHttpServer;

  constructor(private readonly options: SidecarTransferServerOptions) {
    this.server = new SidecarHttpServer(
      '--transfer-http',
      (req, res) => this.handle(req, res),
      options.logger,
      options.limits,
    );
  }

  /** Listens on `host:port`; resolves the bound address (port 0 picks a free one). */
  listen(host: string, port: number): Promise<AddressInfo> {
    return this.server.listen(host, port);
  }

  /** Stops accepting connections and closes open ones. */
  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const request = await this.admit(req);
      const body = await this.transfer(request);
      sendJson(res, 200, body);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      // An unread body is left behind: close the connection with the answer.
      const close: Record<string, string> = req.complete ? {} : { connection: 'close' };
      sendJson(res, error.status, { error: error.error }, { ...error.headers, ...close });
    }
  }

  /** Steps 1–5 of the file's description: who may ask, and what. */
  private async admit(req: IncomingMessage): Promise<SidecarTransferRequest> {
    if (requestPath(req.url) !== '/transfer') {
      throw new Refusal(404, sidecarMessages.transferNoRoute);
    }
    if (req.method !== 'POST') {
      throw new Refusal(405, sidecarMessages.postOnly, { allow: 'POST' });
    }
    const { token } = this.options;
    if (token && !token.matches(req.headers.authorization)) {
      throw new Refusal(401, sidecarMessages.transferUnauthorized, {
        'www-authenticate': 'Bearer',
      });
    }
    if (req.headers.origin !== undefined) {
      throw new Refusal(403, sidecarMessages.transferFromBrowser);
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw new Refusal(415, sidecarMessages.transferJsonOnly);
    const text = await readBody(req, MAX_TRANSFER_BODY_BYTES);
    if (text === undefined) {
      throw new Refusal(413, sidecarMessages.transferBodyTooLarge(MAX_TRANSFER_BODY_BYTES));
    }
    return parseTransferRequest(text);
  }

  /** Step 6 and the handoff itself. */
  private async transfer(request: SidecarTransferRequest): Promise<SidecarTransferResponse> {
    const { elector, lock, logger } = this.options;
    const to = request.to;
    if (elector.term === undefined) {
      throw new Refusal(409, sidecarMessages.transferNotLeader);
    }
    let advertised: boolean;
    try {
      const current = await lock.get(AbortSignal.timeout(this.options.readTimeoutMs));
      advertised = (current?.record.candidates ?? []).some((c) => c.identity === to);
    } catch (error) {
      logger.warn(sidecarMessages.transferReadFailed(error));
      throw new Refusal(502, sidecarMessages.transferReadFailedAnswer);
    }
    if (!advertised) throw new Refusal(409, sidecarMessages.transferNotCandidate(to));
    const { leaseDurationSeconds } = request;
    try {
      await elector.transferLeadership(to, { leaseDurationSeconds });
    } catch (error) {
      if (error instanceof InvalidLeaderElectionOptionError) {
        throw new Refusal(400, error.message);
      }
      if (error instanceof LeadershipTransferError && error.reason !== 'write-failed') {
        throw new Refusal(409, error.message);
      }
      logger.error(sidecarMessages.transferWriteFailed(error));
      throw new Refusal(502, sidecarMessages.transferWriteFailedAnswer);
    }
    return {
      to,
      // `to` advertises itself, so it was offered the Lease and accepted: the core reserved it
      // for at most one offer window.
      leaseDurationSeconds: acceptedHandoffSeconds(
        this.options.retryPeriodMs,
        leaseDurationSeconds ?? this.options.leaseDurationSeconds,
      ),
      leaseTransitions: elector.leaseTransitions ?? null,
    };
  }
}

/**
 * The transfer request from the body's text.
 * @throws Refusal (400) unless it is a JSON object with a valid identity `to`, an optional
 *   number `leaseDurationSeconds` (its rule is the core's), and nothing else.
 */
function parseTransferRequest(text: string): SidecarTransferRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Refusal(400, sidecarMessages.transferBodyShape);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Refusal(400, sidecarMessages.transferBodyShape);
  }
  const { to, leaseDurationSeconds, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new Refusal(400, sidecarMessages.transferBodyShape);
  if (to === undefined) throw new Refusal(400, sidecarMessages.transferNeedsTarget);
  try {
    validateIdentity(to, 'to');
  } catch (error) {
    throw new Refusal(400, (error as Error).message);
  }
  if (leaseDurationSeconds !== undefined && typeof leaseDurationSeconds !== 'number') {
    throw new Refusal(400, sidecarMessages.transferBodyShape);
  }
  return leaseDurationSeconds === undefined
    ? { to: to as string }
    : { to: to as string, leaseDurationSeconds };
}

/**
 * The request's body as text, or `undefined` as soon as it exceeds `maxBytes` (declared or
 * received); the rest is not read.
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  if (Number(req.headers['content-length']) > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        req.pause();
        resolve(undefined);
      } else chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
