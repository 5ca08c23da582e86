import type { LeaderOnlyGateLike } from '../leader-only/leader-only.interfaces.js';
import type { ElectionOrchestrator } from './election.orchestrator.js';
import type { ManagedElector, ResolvedElectionOptions } from './elections.interfaces.js';
import type { LateSlotRunner, ScheduleLedgerKeeper } from '../schedule/schedule-ledger.keeper.js';
import type { LeaderElectionService } from './leader-election.service.js';

/** Everything of one election the application-wide parts (explorer, lifecycle, health) need. */
export interface RegisteredElection {
  readonly name: string;
  readonly service: LeaderElectionService;
  readonly elector: ManagedElector;
  readonly orchestrator: ElectionOrchestrator;
  /** The election's `@LeaderOnly()` gate: the wrappers' calls and the ledger's late slots. */
  readonly gate: LeaderOnlyGateLike & LateSlotRunner;
  /** The election's schedule ledger: the explorer registers its leader-only recurring jobs. */
  readonly schedule: ScheduleLedgerKeeper;
  /** The election's options, defaults applied. */
  readonly options: ResolvedElectionOptions;
  /** The line logged when the election starts. */
  readonly startMessage: string;
}
