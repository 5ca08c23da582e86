import { Injectable } from '@nestjs/common';
import { DuplicateElectionError, UnknownElectionError } from '../../errors.js';
import type { LeaderOnlyGateLike, LeaderOnlyGates } from '../leader-only/leader-only.interfaces.js';
import type { RegisteredElection } from './registered-election.interfaces.js';

/**
 * The elections of one application, by name: each election's providers register it here when
 * the application is created; the explorer, the lifecycle and the health indicator look
 * elections up here.
 */
@Injectable()
export class ElectionDirectory {
  private readonly elections = new Map<string, RegisteredElection>();
  private readonly gateMap = new Map<string, LeaderOnlyGateLike>();

  /** The `@LeaderOnly()` gates of the application, by election: what instances are bound to. */
  get gates(): LeaderOnlyGates {
    return this.gateMap;
  }

  /** @throws DuplicateElectionError if an election of that name is registered already. */
  register(election: RegisteredElection): void {
    if (this.elections.has(election.name)) throw new DuplicateElectionError(election.name);
    this.elections.set(election.name, election);
    this.gateMap.set(election.name, election.gate);
  }

  /** Names of the registered elections, in registration order. */
  names(): string[] {
    return [...this.elections.keys()];
  }

  /** Every registered election, in registration order. */
  all(): RegisteredElection[] {
    return [...this.elections.values()];
  }

  /**
   * The election called `name`.
   * @param className - for the error: the class whose method asks, if any
   * @param methodName - for the error: the method that asks, if any
   * @throws UnknownElectionError naming the known elections if there is none.
   */
  get(name: string, className?: string, methodName?: string): RegisteredElection {
    const election = this.elections.get(name);
    if (!election) throw new UnknownElectionError(name, this.names(), className, methodName);
    return election;
  }
}
