import { Logger, type Provider } from '@nestjs/common';
import { LeaderElector } from '../../core/election/leader-elector.js';
import type { LeaderCallbacks } from '../../core/leader-elector.options.js';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';
import { LEADER_MODULE_OPTIONS } from '../leader.module-definition.js';
import type { ElectionOptions, LeaderModuleOptions } from '../leader-module-options.interfaces.js';
import { LeaderOnlyGate } from '../leader-only/leader-only.gate.js';
import type { ResourceLock } from '../../locks/resource-lock.js';
import { nestMessages } from '../nest.messages.js';
import { toElectionLogger } from '../nest-logger.adapter.js';
import type { LeaderOnlyCallCounter } from '../leader-only/leader-only.interfaces.js';
import type { ScheduleSlotCounter } from '../../observability/election-metrics.interfaces.js';
import { ScheduleLedgerKeeper } from '../schedule/schedule-ledger.keeper.js';
import { ElectionDirectory } from './election.directory.js';
import {
  buildElectionObserver,
  type ElectionObserverWithExtras,
} from './election-observer.factory.js';
import { ElectionOrchestrator } from './election.orchestrator.js';
import {
  getElectionCallbacksToken,
  getElectionLockToken,
  getElectionObserverToken,
  getElectionOptionsToken,
  getLeaderElectionToken,
  getLeaderElectorToken,
} from './election.tokens.js';
import { buildElectionLock, describeElectionLock } from './election-lock.factory.js';
import { toElectorSettings, withModuleOptionNames } from './election-options.mapping.js';
import { resolveElectionOptions } from './election-options.resolver.js';
import { lookUpPodCreationTimestamp } from './pod-creation-timestamp.lookup.js';
import type { ManagedElector, ResolvedElectionOptions } from './elections.interfaces.js';
import { LeaderElectionService } from './leader-election.service.js';
import type { RegisteredElection } from './registered-election.interfaces.js';

/** Token of the options the user gave for one election (before merging with the defaults). */
export function getElectionGivenOptionsToken(name: string): string {
  return `nest-leader:given-options:${name}`;
}

const orchestratorToken = (name: string) => `nest-leader:orchestrator:${name}`;
const scheduleToken = (name: string) => `nest-leader:schedule-ledger:${name}`;
const registrationToken = (name: string) => `nest-leader:registration:${name}`;

/** Every provider of one election that other modules may inject. */
export function electionExports(name: string): (string | typeof LeaderElectionService)[] {
  return [
    getLeaderElectionToken(name),
    getElectionLockToken(name),
    getElectionObserverToken(name),
    getLeaderElectorToken(name),
    getElectionCallbacksToken(name),
    getElectionOptionsToken(name),
  ];
}

/**
 * The providers of one election, each under a token of its own, built in this order: options
 * (the user's, given under {@link getElectionGivenOptionsToken}, over `forRoot()`'s), lock,
 * observer, orchestrator and its callbacks, elector (after reading its pod's creation time,
 * see `lookUpPodCreationTimestamp`), service, and the registration that makes
 * the election known to the application. Any of the public ones can be replaced through Nest
 * DI by a provider with the same token added after these.
 */
export function createElectionProviders(name: string): Provider[] {
  const logger = new Logger('LeaderElection');
  return [
    {
      provide: getElectionOptionsToken(name),
      inject: [
        getElectionGivenOptionsToken(name),
        { token: LEADER_MODULE_OPTIONS, optional: true },
      ],
      useFactory: (given: ElectionOptions, defaults?: LeaderModuleOptions) =>
        resolveElectionOptions(name, given, name === DEFAULT_ELECTION_NAME ? undefined : defaults),
    },
    {
      provide: getElectionLockToken(name),
      inject: [getElectionOptionsToken(name)],
      useFactory: (options: ResolvedElectionOptions) => buildElectionLock(options),
    },
    {
      provide: getElectionObserverToken(name),
      inject: [getElectionOptionsToken(name), getElectionLockToken(name)],
      useFactory: (options: ResolvedElectionOptions, lock: ResourceLock) =>
        buildElectionObserver(options, lock),
    },
    {
      provide: orchestratorToken(name),
      inject: [getElectionOptionsToken(name)],
      useFactory: (options: ResolvedElectionOptions) => new ElectionOrchestrator(options),
    },
    {
      provide: scheduleToken(name),
      inject: [getElectionOptionsToken(name), getElectionObserverToken(name)],
      useFactory: (options: ResolvedElectionOptions, observer: ElectionObserverWithExtras) =>
        new ScheduleLedgerKeeper(name, options.clock, slotCounter(name, observer)),
    },
    {
      provide: getElectionCallbacksToken(name),
      inject: [orchestratorToken(name), getElectionObserverToken(name), scheduleToken(name)],
      useFactory: (
        orchestrator: ElectionOrchestrator,
        observer: ElectionObserverWithExtras,
        schedule: ScheduleLedgerKeeper,
      ) =>
        withScheduleCatchUp(withObserverFlush(orchestrator.callbacks, observer), schedule, logger),
    },
    {
      provide: getLeaderElectorToken(name),
      inject: [
        getElectionOptionsToken(name),
        getElectionLockToken(name),
        getElectionObserverToken(name),
        getElectionCallbacksToken(name),
        scheduleToken(name),
      ],
      useFactory: async (
        options: ResolvedElectionOptions,
        lock: ResourceLock,
        observer: ElectionObserverWithExtras,
        callbacks: LeaderCallbacks,
        schedule: ScheduleLedgerKeeper,
      ): Promise<ManagedElector> => {
        const podCreationTimestamp = await lookUpPodCreationTimestamp(options, lock, logger);
        return withModuleOptionNames(
          name,
          'elector',
          () =>
            new LeaderElector({
              ...toElectorSettings(options),
              ...options.timings,
              podCreationTimestamp,
              name,
              lock,
              logger: toElectionLogger(logger),
              observer,
              callbacks,
              scheduleLedger: schedule.writer,
            }),
        );
      },
    },
    {
      provide: getLeaderElectionToken(name),
      inject: [
        getElectionOptionsToken(name),
        getLeaderElectorToken(name),
        orchestratorToken(name),
        getElectionLockToken(name),
      ],
      useFactory: (
        options: ResolvedElectionOptions,
        elector: ManagedElector,
        orchestrator: ElectionOrchestrator,
        lock: ResourceLock,
      ) => new LeaderElectionService(name, elector, orchestrator, options.timings, lock),
    },
    {
      provide: registrationToken(name),
      inject: [
        ElectionDirectory,
        getElectionOptionsToken(name),
        getElectionLockToken(name),
        getLeaderElectorToken(name),
        orchestratorToken(name),
        getLeaderElectionToken(name),
        getElectionObserverToken(name),
        scheduleToken(name),
      ],
      useFactory: (
        directory: ElectionDirectory,
        options: ResolvedElectionOptions,
        lock: ResourceLock,
        elector: ManagedElector,
        orchestrator: ElectionOrchestrator,
        service: LeaderElectionService,
        observer: ElectionObserverWithExtras,
        schedule: ScheduleLedgerKeeper,
      ): RegisteredElection => {
        const election: RegisteredElection = {
          name,
          service,
          elector,
          orchestrator,
          schedule,
          options,
          gate: new LeaderOnlyGate(
            service,
            orchestrator.inFlight,
            callCounter(name, observer),
            schedule,
          ),
          startMessage: nestMessages.starting({
            election: name,
            identity: elector.identity,
            lock: lock.description,
            ...describeElectionLock(lock),
            ...options.timings,
            shutdownGraceMs: options.shutdownGraceMs,
          }),
        };
        directory.register(election);
        return election;
      },
    },
  ];
}

/**
 * The elector's callbacks, with `onStoppedLeading` also awaiting `observer.flush()` (if it has
 * one), in parallel with the drain: the Event and the pod label of a term's end are written
 * before the Lease is released.
 */
function withObserverFlush(
  callbacks: LeaderCallbacks,
  observer: ElectionObserverWithExtras,
): LeaderCallbacks {
  const { flush } = observer;
  if (typeof flush !== 'function') return callbacks;
  return {
    ...callbacks,
    onStoppedLeading: async (term) => {
      await Promise.all([callbacks.onStoppedLeading?.(term), flush.call(observer)]);
    },
  };
}

/**
 * The elector's callbacks, with `onStartedLeading` also starting the schedule ledger's
 * catch-up (not awaited: late runs go through the `@LeaderOnly()` gate and are drained with
 * the term's other work).
 */
function withScheduleCatchUp(
  callbacks: LeaderCallbacks,
  schedule: ScheduleLedgerKeeper,
  logger: Logger,
): LeaderCallbacks {
  return {
    ...callbacks,
    onStartedLeading: (term) => {
      const started = callbacks.onStartedLeading?.(term);
      schedule.termStarted(term).catch((error: unknown) => logger.error(error));
      return started;
    },
  };
}

/** Counts the slots of leader-only recurring jobs when the election's observer has metrics. */
function slotCounter(
  election: string,
  observer: ElectionObserverWithExtras,
): ((job: string) => ScheduleSlotCounter) | undefined {
  const counter = observer.scheduleSlotCounter;
  return typeof counter === 'function' ? (job) => counter.call(observer, election, job) : undefined;
}

/** Counts `@LeaderOnly()` calls when the election's observer keeps call counts (metrics on). */
function callCounter(
  election: string,
  observer: ElectionObserverWithExtras,
): LeaderOnlyCallCounter | undefined {
  const tally = observer.leaderOnlyCallTally;
  return typeof tally === 'function'
    ? (handler) => tally.call(observer, election, handler)
    : undefined;
}
