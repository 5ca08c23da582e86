/**
 * Leadership decided by a `nest-leader-elector` sidecar in the same pod, presented to the
 * elector as a {@link ResourceLock}: the application does not campaign on the Lease itself, it
 * follows its sidecar. Framework-free; uses the global `fetch`.
 */
import {
  InvalidLeaderElectionOptionError,
  LockConflictError,
  SidecarLockError,
} from '../errors.js';
import { lockMessages } from './lock.messages.js';
import { validateRequestTimeoutMs } from '../kubernetes/request-options.js';
import type { LeaseRecord, ResourceLock, VersionedLeaseRecord } from './resource-lock.js';
import type { SidecarReadyResponse } from './sidecar-wire.js';

/** Default timeout of one request to the sidecar. */
export const DEFAULT_SIDECAR_REQUEST_TIMEOUT_MS = 1000;

/** Options of {@link SidecarLock}. */
export interface SidecarLockOptions {
  /** Base URL of the sidecar's `--http` endpoints, e.g. `http://localhost:4040`. */
  url: string;
  /** Upper bound of one request in ms; default 1000. */
  requestTimeoutMs?: number;
}

/**
 * `GET /ready`'s body as it arrives: the fields of the wire contract's
 * {@link SidecarReadyResponse}, each unchecked until this lock has checked it.
 */
type ReadyBody = { [Field in keyof SidecarReadyResponse]?: unknown };

/**
 * Follows the sidecar's `GET /ready`: this pod leads exactly while its sidecar answers 200,
 * and each term of the sidecar is one term of the application, with the sidecar's
 * `leaseTransitions` as its fencing token.
 *
 * How the elector's requests map onto the sidecar:
 * - `get` reads `/ready`. While the sidecar leads in a term this lock has not accepted yet, the
 *   record reads as free (holder `""`, transitions = the sidecar's token − 1), so the elector
 *   takes it at once and its term's `leaseTransitions` equals the sidecar's token (for the
 *   sidecar's first term, token 0, the record reads as absent and the elector creates it). While the
 *   sidecar leads in the accepted term, the holder is the application's identity. Otherwise the
 *   holder is the leader the sidecar observes; before the sidecar has read its Lease at all,
 *   `get` rejects (transient) instead of inventing a record. Every read is a new record (its
 *   times are the read's): followers never judge the sidecar's leader expired by themselves.
 * - `update` naming a holder succeeds only if `/ready` answers 200 with that record's
 *   transitions (the renewal of the application's term is a fresh check of its sidecar's);
 *   otherwise `LockConflictError`, and the elector re-reads and ends the term. `update` clearing
 *   the holder (release) succeeds without a request: only the sidecar can release its Lease.
 * - `create` is checked as `update` (it only follows a `get` that found no record).
 *
 * The application's step-down deadline is kept: when the sidecar stops answering, renewals fail
 * and the term ends at `renewDeadline`. Staleness: the application learns that its sidecar's
 * term ended at its next renewal, up to `retryPeriod` + one request later; the sidecar's own term
 * ends at its renew deadline (ttl/2) while no other pod may lead before ttl, so keep the
 * application's `renewDeadlineSeconds` + `retryPeriodSeconds` below the sidecar's ttl/2.
 *
 * Errors: an unreachable sidecar or an answer that is not the sidecar's JSON rejects with an
 * `Error` naming the URL (the elector retries within its deadlines).
 */
export class SidecarLock implements ResourceLock {
  /** `sidecar <url>`. */
  readonly description: string;
  private readonly readyUrl: string;
  private readonly requestTimeoutMs: number;
  private version = 0;
  /** The sidecar term (its token) the application leads in, and the identity it wrote. */
  private accepted: { token: number; holder: string } | undefined;
  /** The application's identity, once it wrote one. */
  private self: string | undefined;

  /** @throws InvalidLeaderElectionOptionError if `url` is not an http(s) URL. */
  constructor(opts: SidecarLockOptions) {
    let base: URL;
    try {
      base = new URL(opts.url);
    } catch {
      throw new InvalidLeaderElectionOptionError(
        'lock.sidecar',
        lockMessages.sidecarUrlRule,
        opts.url,
      );
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new InvalidLeaderElectionOptionError(
        'lock.sidecar',
        lockMessages.sidecarUrlRule,
        opts.url,
      );
    }
    this.readyUrl = new URL('ready', base.href.endsWith('/') ? base : `${base.href}/`).href;
    this.description = `sidecar ${base.href.replace(/\/$/, '')}`;
    this.requestTimeoutMs = validateRequestTimeoutMs(
      opts.requestTimeoutMs,
      DEFAULT_SIDECAR_REQUEST_TIMEOUT_MS,
    );
  }

  /**
   * Reads the sidecar's view as a record (see the class comment).
   * @throws SidecarLockError when the sidecar does not answer, has not read its Lease yet, or
   *   answers something other than its JSON.
   */
  async get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    const ready = await this.ready(signal);
    const version = String(++this.version);
    const now = new Date();
    if (ready.leader && ready.token !== undefined) {
      if (this.accepted?.token === ready.token) {
        const record = held(this.accepted.holder, ready.token, now);
        return { record, version };
      }
      // The elector's new term takes transitions + 1; the sidecar's first term (token 0) is
      // represented as "no record yet", which the elector creates with transitions 0.
      if (ready.token === 0) return undefined;
      return { record: held('', ready.token - 1, now), version };
    }
    this.accepted = undefined;
    if (ready.token === undefined) {
      // The sidecar has not read its Lease yet: report nothing rather than a made-up record, so
      // the elector's first observation is a real one (its first term may be token 0).
      throw new SidecarLockError(
        this.readyUrl,
        'not-ready',
        lockMessages.sidecarNotReady(this.readyUrl),
      );
    }
    // The Lease may still name this pod after its sidecar's term ended: never report our own
    // identity while the sidecar does not lead, or the elector would take it as its renewal.
    const holder = ready.name === this.self ? '' : ready.name;
    return { record: held(holder, ready.token, now), version };
  }

  /**
   * The application's first term in the sidecar's first term (token 0): accepted as `update`.
   * @throws LockConflictError when the sidecar does not lead in that term.
   */
  async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    try {
      return await this.update(record, '', signal);
    } catch (error) {
      if (error instanceof LockConflictError)
        throw new LockConflictError(this.description, 'create');
      throw error;
    }
  }

  /**
   * Accepts the record if the sidecar leads in the term the record names; a release (empty
   * holder) is accepted without asking.
   * @throws LockConflictError when the sidecar does not lead, or leads in another term.
   */
  async update(record: LeaseRecord, _version: string, signal?: AbortSignal): Promise<string> {
    if (record.holderIdentity === '') {
      this.accepted = undefined;
      return String(++this.version);
    }
    this.self = record.holderIdentity;
    const ready = await this.ready(signal);
    if (!ready.leader || ready.token !== record.leaseTransitions) {
      this.accepted = undefined;
      throw new LockConflictError(this.description, 'update');
    }
    this.accepted = { token: ready.token, holder: record.holderIdentity };
    this.self = record.holderIdentity;
    return String(++this.version);
  }

  private async ready(
    signal: AbortSignal | undefined,
  ): Promise<{ leader: boolean; name: string; token: number | undefined }> {
    const timeout = AbortSignal.timeout(this.requestTimeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let body: ReadyBody;
    let status: number;
    try {
      const response = await fetch(this.readyUrl, { signal: combined });
      status = response.status;
      body = (await response.json()) as ReadyBody;
    } catch (error) {
      throw new SidecarLockError(
        this.readyUrl,
        'unreachable',
        lockMessages.sidecarUnreachable(this.readyUrl, error),
        { cause: error },
      );
    }
    const token = body?.leaseTransitions;
    if (
      (status !== 200 && status !== 503) ||
      typeof body?.leader !== 'boolean' ||
      (body.leader && (typeof token !== 'number' || !Number.isSafeInteger(token)))
    ) {
      throw new SidecarLockError(
        this.readyUrl,
        'unexpected',
        lockMessages.sidecarUnexpected(this.readyUrl, status),
      );
    }
    return {
      leader: status === 200 && body.leader,
      name: typeof body.name === 'string' ? body.name : '',
      token: typeof token === 'number' && Number.isSafeInteger(token) ? token : undefined,
    };
  }
}

function held(holderIdentity: string, leaseTransitions: number, now: Date): LeaseRecord {
  return {
    holderIdentity,
    leaseDurationSeconds: 0,
    leaseTransitions,
    acquireTime: now,
    renewTime: now,
  };
}
