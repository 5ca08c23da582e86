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
  private readonly sharded = new Set<string>();

  /** The `@LeaderOnly()` gates of the application, by election: what instances are bound to. */
  get gates(): LeaderOnlyGates {
    return this.gateMap;
  }

  /** @throws DuplicateElectionError if an election of that name is registered already. */
  register(election: RegisteredElection): void {
    if (this.gateMap.has(election.name)) throw new DuplicateElectionError(election.name);
    this.elections.set(election.name, election);
    this.gateMap.set(election.name, election.gate);
  }

  /** Names of the registered elections, in registration order. */
  /**
   * Adds a sharded election's `@LeaderOnly()` gate (it has no elector of its own here: its
   * service runs its lifecycle).
   * @throws DuplicateElectionError if an election of that name is already registered
   */
  registerSharded(name: string, gate: LeaderOnlyGateLike): void {
    if (this.gateMap.has(name)) throw new DuplicateElectionError(name);
    this.sharded.add(name);
    this.gateMap.set(name, gate);
  }

  /** True when `name` is a sharded election. */
  isSharded(name: string): boolean {
    return this.sharded.has(name);
  }

  names(): string[] {
    return [...this.gateMap.keys()];
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
