/**
 * The wire contract of the `nest-leader-elector` sidecar (package `nest-leader-elector`): what
 * it serves over HTTP and writes to its leader file, and what reads them — `SidecarLock`
 * here, any application in another language there. Written once, here: the sidecar serves these
 * shapes, `SidecarLock` reads them.
 *
 * - `GET /` → 200 {@link SidecarLeaderResponse} (as the retired `leader-elector:0.5` image's
 *   `{"name"}`, plus nais/elector's `last_update`).
 * - `GET /ready` → 200 on the leader, 503 elsewhere: `SidecarReadyResponse`.
 * - `GET /healthz` → 200 or 503: {@link SidecarHealthResponse}.
 * - `POST /transfer` (on the sidecar's separate `--transfer-http` address) with
 *   `Content-Type: application/json` and a body of at most {@link MAX_TRANSFER_BODY_BYTES}
 *   bytes, {@link SidecarTransferRequest} → 200 {@link SidecarTransferResponse}; a refusal is a
 *   4xx or 502 `{"error": "<text>"}`.
 * - `--leader-file`: a JSON {@link LeaderFileContent} that exists only while the sidecar leads.
 *
 * Types and one limit only: no code, so the sidecar and its readers share the shapes without
 * either importing the other.
 */

/** What `GET /` answers (200). */
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

/** What `GET /healthz` answers: 200 when healthy, else 503. */
export interface SidecarHealthResponse {
  /** False when the elector is wedged or its election loop ended; why is in the sidecar's log. */
  healthy: boolean;
}

/** Largest request body accepted by `POST /transfer`, bytes; a larger one answers 413. */
export const MAX_TRANSFER_BODY_BYTES = 1024;

/** The body of `POST /transfer` (JSON); any other field is refused (400). */
export interface SidecarTransferRequest {
  /** The identity of the candidate to hand leadership to; it must advertise itself on the Lease. */
  to: string;
  /** How long the Lease is reserved for `to`, whole seconds, at most (and by default) the ttl. */
  leaseDurationSeconds?: number;
}

/** What `POST /transfer` answers with 200: the handoff was written. */
export interface SidecarTransferResponse {
  /** The candidate the Lease was handed to (its holderIdentity now). */
  to: string;
  /**
   * How long the Lease is reserved for `to`, seconds: the handoff's bound, at most one offer
   * window (`to` accepted an offer: it takes the Lease within a poll).
   */
  leaseDurationSeconds: number;
  /** The handoff record's leaseTransitions (the sidecar's ended term + 1). */
  leaseTransitions: number | null;
}

/**
 * What the leader file holds (JSON): who leads, the term's fencing token, and until when the
 * file may be believed. A reader must check the expiry: a sidecar killed with SIGKILL (or OOM,
 * or frozen) cannot remove its file, and another pod may lead once it has expired.
 */
export interface LeaderFileContent {
  /** The sidecar's identity (its `--id`). */
  name: string;
  /** The term's `leaseTransitions`: a fencing token for the application's writes. */
  leaseTransitions: number;
  /** When the term began (RFC 3339). */
  acquiredAt: string;
  /**
   * Until when (RFC 3339, wall clock of this node) the file may be taken for leadership:
   * written as "now + leaseDuration − renewDeadline" at each rewrite while the term is live,
   * which no other candidate can lead before (it waits leaseDuration from the last renewal it
   * saw, and this term ends at most renewDeadline after it). Moves forward every retry period.
   */
  expiresAt: string;
  /** {@link LeaderFileContent.expiresAt} as whole seconds since the Unix epoch, rounded down (for shells: `date +%s`). */
  expiresAtUnixSeconds: number;
}
