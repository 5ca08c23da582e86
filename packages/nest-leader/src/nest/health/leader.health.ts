import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { HealthIndicatorService } from '@nestjs/terminus';
import { ElectionDirectory } from '../elections/election.directory.js';
import { LeaderElectionError } from '../../errors.js';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';
import { nestMessages } from '../nest.messages.js';
import { importTerminus } from '../../peers/optional-peers.js';

/** A Terminus `HealthIndicatorResult` of {@link LeaderHealthIndicator}. */
export type LeaderHealthIndicatorResult<Key extends string> = Record<
  Key,
  { status: 'up' | 'down' } & Record<string, unknown>
>;

/**
 * Terminus health indicators for the application's elections, built on Terminus'
 * `HealthIndicatorService`. `LeaderModule` provides it application-wide: inject it into your
 * health controller without listing it in any `providers`:
 * - {@link LeaderHealthIndicator.isHealthy} — liveness (`/healthz`) of every election: down
 *   only when an elector is wedged; followers are healthy.
 * - {@link LeaderHealthIndicator.isLeader} — readiness (`/readyz`) for one election's
 *   leader-only traffic: up only on its leader. Read the leader-only readiness trap in
 *   the package's docs/handoff-and-rollouts.md before using it.
 *
 * `@nestjs/terminus` is loaded when the indicator initializes, not when `nest-leader` is
 * imported, so applications without Terminus do not need it installed (calling a method then
 * throws `LeaderElectionError` naming the package).
 * @throws LeaderElectionError when created in an application without `LeaderModule`, saying
 *   what to import.
 */
@Injectable()
export class LeaderHealthIndicator implements OnModuleInit {
  private indicators?: HealthIndicatorService;
  private terminusError?: unknown;
  private readonly elections: ElectionDirectory;

  /** @internal Created by `LeaderModule`; inject it, never construct it. */
  constructor(
    @Optional() @Inject(ElectionDirectory) elections: ElectionDirectory | null,
    private readonly moduleRef: ModuleRef,
  ) {
    // Without LeaderModule Nest would fail with a generic "can't resolve dependencies" error;
    // say what to import instead.
    if (!elections) throw new LeaderElectionError(nestMessages.healthWithoutLeaderModule);
    this.elections = elections;
  }

  /**
   * Nest's init hook: loads `@nestjs/terminus` (an optional peer). Without it the application still starts; the
   * indicator's methods then throw, naming the package to install.
   */
  async onModuleInit(): Promise<void> {
    let terminus: Awaited<ReturnType<typeof importTerminus>>;
    try {
      terminus = await importTerminus();
    } catch (error) {
      this.terminusError = error;
      return;
    }
    // TerminusModule's instance when the application imports it; the service has no
    // dependencies, so one of our own otherwise.
    try {
      this.indicators = this.moduleRef.get(terminus.HealthIndicatorService, { strict: false });
    } catch {
      this.indicators = new terminus.HealthIndicatorService();
    }
  }

  private session<Key extends string>(key: Key) {
    if (!this.indicators) {
      throw new LeaderElectionError(nestMessages.terminusMissing(this.terminusError), {
        cause: this.terminusError,
      });
    }
    return this.indicators.check(key);
  }

  /**
   * Liveness of every election of the application: `up` unless an elector is wedged — it
   * believes it leads but has not renewed for the lease duration (plus `toleranceMs`), or its
   * loop died — as client-go's `HealthzAdaptor`. Details with only the default election:
   * `identity`, `leader`, `isLeader`, and `message` when down; with named elections, the same
   * per election under `elections.<name>`.
   * @param key - result key; default `'leaderElection'`
   * @param toleranceMs - grace past the lease duration before reporting down
   */
  isHealthy<Key extends string = 'leaderElection'>(
    key: Key = 'leaderElection' as Key,
    toleranceMs?: number,
  ): LeaderHealthIndicatorResult<Key> {
    const reports = this.elections.all().map(({ name, service }) => {
      const { healthy, reason } = service.health(toleranceMs);
      const details = {
        identity: service.identity,
        leader: service.leader ?? null,
        isLeader: service.isLeader(),
        ...(healthy ? {} : { message: reason }),
      };
      return { name, healthy, details };
    });
    const healthy = reports.every((report) => report.healthy);
    const onlyDefault = reports.length === 1 && reports[0]!.name === DEFAULT_ELECTION_NAME;
    const details: Record<string, unknown> = onlyDefault
      ? reports[0]!.details
      : { elections: Object.fromEntries(reports.map((report) => [report.name, report.details])) };
    const session = this.session(key);
    return healthy ? session.up(details) : session.down(details);
  }

  /**
   * Readiness for one election's leader-only traffic: `up` only while this replica leads it.
   * Details: `holder` (the observed leader, or `null`), `identity`, and `leaseTransitions` (of
   * the term when up, of the Lease as last observed when down; `null` before the first read).
   * @param election - default `'default'`, the election of `LeaderModule.forRoot()`
   * @param key - result key; default `'leader'` for the default election, else the election's name
   * @throws UnknownElectionError if the application has no such election.
   */
  isLeader<Key extends string = 'leader'>(
    election: string = DEFAULT_ELECTION_NAME,
    key: Key = (election === DEFAULT_ELECTION_NAME ? 'leader' : election) as Key,
  ): LeaderHealthIndicatorResult<Key> {
    const { service } = this.elections.get(election);
    const term = service.term;
    const details = {
      holder: service.leader ?? null,
      identity: service.identity,
      leaseTransitions: term?.leaseTransitions ?? service.leaseTransitions ?? null,
    };
    const session = this.session(key);
    return term ? session.up(details) : session.down(details);
  }
}
