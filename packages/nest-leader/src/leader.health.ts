import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { HealthIndicatorService } from '@nestjs/terminus';
import { LeaderElectionService } from './leader-election.service.js';

/** A Terminus `HealthIndicatorResult` of {@link LeaderHealthIndicator}. */
export type LeaderHealthIndicatorResult<Key extends string> = Record<
  Key,
  { status: 'up' | 'down' } & Record<string, unknown>
>;

/**
 * Terminus health indicators for the election, built on Terminus' `HealthIndicatorService`.
 * Provide it in the module that imports `TerminusModule`:
 * - {@link LeaderHealthIndicator.isHealthy} — liveness (`/healthz`): down only when the elector
 *   is wedged; followers are healthy.
 * - {@link LeaderHealthIndicator.isLeader} — readiness (`/readyz`) for leader-only traffic: up
 *   only on the leader. Read the README's "Leader-only readiness" trap before using it.
 *
 * `@nestjs/terminus` is loaded when the indicator initializes, not when `nest-leader` is
 * imported, so applications without Terminus do not need it installed.
 */
@Injectable()
export class LeaderHealthIndicator implements OnModuleInit {
  private indicators!: HealthIndicatorService;

  constructor(
    private readonly election: LeaderElectionService,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onModuleInit(): Promise<void> {
    const terminus = await import('@nestjs/terminus');
    this.indicators = this.moduleRef.get(terminus.HealthIndicatorService, { strict: false });
  }

  /**
   * Liveness: `up` unless the elector is wedged — it believes it leads but has not renewed
   * for the lease duration (plus `toleranceMs`), or its loop died — as client-go's
   * `HealthzAdaptor`. Details: `identity`, `leader`, `isLeader`, and `message` when down.
   * @param key - result key; default `'leaderElection'`
   * @param toleranceMs - grace past the lease duration before reporting down
   */
  isHealthy<Key extends string = 'leaderElection'>(
    key: Key = 'leaderElection' as Key,
    toleranceMs?: number,
  ): LeaderHealthIndicatorResult<Key> {
    const { healthy, reason } = this.election.health(toleranceMs);
    const details = {
      identity: this.election.identity,
      leader: this.election.leader ?? null,
      isLeader: this.election.isLeader(),
    };
    const session = this.indicators.check(key);
    return healthy ? session.up(details) : session.down({ ...details, message: reason });
  }

  /**
   * Readiness for leader-only traffic: `up` only while this replica leads. Details: `holder`
   * (the observed leader, or `null`), `identity`, and `leaseTransitions` (of the term when up,
   * of the Lease as last observed when down; `null` before the first read).
   * @param key - result key; default `'leader'`
   */
  isLeader<Key extends string = 'leader'>(
    key: Key = 'leader' as Key,
  ): LeaderHealthIndicatorResult<Key> {
    const term = this.election.term;
    const details = {
      holder: this.election.leader ?? null,
      identity: this.election.identity,
      leaseTransitions: term?.leaseTransitions ?? this.election.leaseTransitions ?? null,
    };
    const session = this.indicators.check(key);
    return term ? session.up(details) : session.down(details);
  }
}
