/**
 * Types shared by `errors.ts`, `errors.messages.ts` and the folders' messages files, kept
 * apart so that none imports another's types back (no import cycle). Framework-free.
 */

import type { LockOperation } from './locks/resource-lock.js';

/**
 * A Kubernetes verb nest-leader uses: the locks' `get`/`create`/`update`, `watch` (a lock's
 * watch), `patch` (pod labels), and `delete` (a coordinated candidate's LeaseCandidate).
 */
export type KubernetesVerb = LockOperation | 'watch' | 'patch' | 'delete' | 'list';

/**
 * How a failed Kubernetes API call is classified:
 * - `unauthorized` (401) and `forbidden` (403): fix credentials or RBAC.
 * - `configuration`: the kubeconfig cannot work as written — its exec credential plugin failed,
 *   a client certificate or key file is missing, the server's certificate does not verify
 *   against the configured CA, or the server URL's scheme is wrong (`http://` to an HTTPS
 *   port). Found out before or while connecting, never by the API server.
 * - `not-found` (404 outside `get`), `conflict` (409 outside create/update), `invalid` (400/422
 *   and other 4xx): the request or object is wrong.
 * - `transient` (429, 5xx, network errors) and `timeout` (our per-request deadline): retried
 *   within the election's deadlines.
 */
export type KubernetesApiErrorKind =
  | 'forbidden'
  | 'unauthorized'
  | 'configuration'
  | 'not-found'
  | 'conflict'
  | 'invalid'
  | 'transient'
  | 'timeout';

/** The former name of {@link KubernetesApiErrorKind}, kept for existing code. */
export type LeaseApiErrorKind = KubernetesApiErrorKind;

/**
 * Why a shard term of a sharded election ended; the reason of its aborted signal:
 * - `revoked`: the coordinator moved the shard (a join, a leave, rebalancing); it is granted to
 *   its next owner once this member acknowledged that it stopped.
 * - `member-epoch-ended`: this member's own Lease was not renewed within renewDeadline, was
 *   evicted or deleted: every shard of the member ends at once.
 * - `stopped`: the sharded election is stopping (application shutdown).
 */
export type ShardTermEndReason = 'revoked' | 'member-epoch-ended' | 'stopped';

/** Why a leader term ended; the reason of an aborted {@link LeaderTerm.signal}. */
export type LeaderTermEndReason =
  | 'stopped'
  | 'handed-off'
  | 'renew-deadline-exceeded'
  | 'lease-taken-over'
  | 'lease-deleted'
  | 'election-failed';

/**
 * Why `LeaderElector.transferLeadership` failed:
 * - `not-leader`: this candidate has no live term, or a transfer is already under way; nothing
 *   changed.
 * - `lease-lost`: the term ended and drained, but the Lease no longer named this candidate at
 *   its term (it expired and was taken, or was deleted): nothing was handed over.
 * - `write-failed`: the term ended and drained, but the handoff could not be written (`cause`
 *   says why); the Lease still names this candidate, which campaigns again as usual.
 * - `no-candidate`: called without a target, and no other candidate advertises itself in the
 *   election record (see `LeaderElectorOptions.podTemplateHash`); nothing changed.
 * - `not-accepted`: the target (or, without one, every candidate offered it in turn) did not
 *   accept the handoff offer within the offer window — it is not running, or cannot write the
 *   Lease; its advertisement was removed, the term goes on, nothing was handed over.
 */
export type LeadershipTransferFailure =
  'not-leader' | 'lease-lost' | 'write-failed' | 'no-candidate' | 'not-accepted';
