/**
 * `spec.preferredHolder` and coordinated leader election (KEP-4355), as client-go's
 * `tryCoordinatedRenew`: the rules the elector applies to a Lease, and the candidacy it runs
 * beside the election in coordinated mode. Framework-free.
 *
 * Kubernetes' election controller (in kube-apiserver, `pkg/controlplane/controller/
 * leaderelection`) names a holder by writing `holderIdentity`, `renewTime`,
 * `leaseDurationSeconds: 5` and `strategy`, with `acquireTime` and `preferredHolder` cleared and
 * `leaseTransitions` untouched; to replace a live holder by a better candidate it only sets
 * `preferredHolder` and waits for the Lease to expire or be handed over.
 */

import type { Candidacy } from '../../locks/candidacy/candidacy.js';
import type { LeaseRecord } from '../../locks/resource-lock.js';
import { coordinatedMessages } from './coordinated-election.messages.js';
import type { ElectionLogger } from '../leader-elector.options.js';
import type { Clock } from '../clock.js';
import { RateLimitedLogger } from '../rate-limited-logger.js';

/**
 * The candidate the holder `identity` should hand `record` over to: its `preferredHolder` when
 * set and naming someone else; `undefined` otherwise. client-go's coordinated mode stops
 * renewing on any non-empty `preferredHolder`; one naming the holder itself asks nothing of
 * it, so it is ignored here.
 *
 * Honoured in ordinary mode too, where client-go ignores the field (it reads it only with
 * `Coordinated: true`). Decided with a hostile peer in mind: the API server stores
 * `preferredHolder` only with the CoordinatedLeaderElection gate on, and only from someone
 * allowed to update the Lease — who may as well write `holderIdentity`, which does more harm
 * (a made-up holder is waited out for its whole lease; a made-up `preferredHolder` costs one
 * bounded handoff reservation, then any candidate may take the Lease). It grants no new
 * power, and gives operators the handoff on request that `kubectl` can ask for.
 */
export function preferredSuccessor(
  record: LeaseRecord | undefined,
  identity: string,
): string | undefined {
  const preferred = record?.preferredHolder;
  return preferred && preferred !== identity ? preferred : undefined;
}

/**
 * True when `record` is the election controller's naming of `identity` as holder: it names
 * `identity` and has no `acquireTime` (the controller clears it; every candidate writes it).
 */
export function namedByController(record: LeaseRecord, identity: string): boolean {
  return record.holderIdentity === identity && record.acquireTime === undefined;
}

/**
 * Runs a candidacy (coordinated mode) beside the election: registered from `start()` until
 * `stop()`, which withdraws it; failures are logged, rate-limited. Without a candidacy it does
 * nothing.
 */
export class CandidacySession {
  private running: { controller: AbortController; done: Promise<void> } | undefined;
  private readonly failures: RateLimitedLogger;

  constructor(
    private readonly candidacy: Candidacy | undefined,
    private readonly logger: ElectionLogger,
    clock: Clock,
  ) {
    this.failures = new RateLimitedLogger(logger, clock);
  }

  /** Registers (until {@link stop}). Starting while registered does nothing. */
  start(): void {
    const candidacy = this.candidacy;
    if (!candidacy || this.running) return;
    const controller = new AbortController();
    const done = candidacy.run(controller.signal, {
      onRegistered: () => this.logger.info(coordinatedMessages.registered(candidacy.description)),
      onPingAnswered: () =>
        this.logger.debug(coordinatedMessages.pingAnswered(candidacy.description)),
      onFailure: (operation, error) =>
        this.failures.report(
          operation,
          'warn',
          coordinatedMessages.candidacyFailed(candidacy.description, operation, error),
        ),
    });
    this.running = { controller, done };
  }

  /** Withdraws the candidacy; resolves once withdrawn (at once if it is not registered). */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    running.controller.abort();
    await running.done;
  }
}
