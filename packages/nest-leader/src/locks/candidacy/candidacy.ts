/**
 * The seam of coordinated leader election (KEP-4355): a candidate announces itself to an
 * election controller that picks the holder and writes it into the Lease; the candidate only
 * follows the Lease. `LeaseCandidateRegistration` is the Kubernetes implementation (a
 * `coordination.k8s.io/v1beta1` LeaseCandidate); tests use their own. Locks never import the
 * elector.
 */

/** What a running candidacy reports; every method is optional. */
export interface CandidacyListener {
  /** The candidacy is registered (created, or found and renewed): the controller may pick it. */
  onRegistered?(): void;
  /** The controller asked for an acknowledgement (a ping) and the candidacy answered it. */
  onPingAnswered?(): void;
  /** A request failed; the candidacy retries by itself. `operation` names the request. */
  onFailure?(operation: string, error: unknown): void;
}

/** A candidate's registration with a coordinated election's controller. */
export interface Candidacy {
  /** The candidate's identity: the `holderIdentity` the controller writes when it picks it. */
  readonly identity: string;
  /** Human-readable name used in logs, e.g. `LeaseCandidate default/alice`. */
  readonly description: string;
  /**
   * Registers and keeps the registration current (answering the controller's pings) until
   * `signal` aborts, then withdraws it. Resolves once withdrawn (or the withdrawal failed,
   * reported to `listener`); never rejects.
   */
  run(signal: AbortSignal, listener?: CandidacyListener): Promise<void>;
}
