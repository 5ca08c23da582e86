import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { ElectionDirectory } from './elections/election.directory.js';
import { leaderMetadata } from './leader-only/leader-metadata.accessor.js';
import { leaderOnlyBindings } from './leader-only/leader-only.bindings.js';
import { providedPrototype } from './provided-prototype.js';
import { nestMessages } from './nest.messages.js';
import type { RegisteredElection } from './elections/registered-election.interfaces.js';
import { resolveCatchUp } from './schedule/catch-up.options.js';
import { readJobSchedule, type JobSchedule } from './schedule/scheduled-job.reader.js';
import { scheduleMessages } from './schedule/schedule.messages.js';

/**
 * Finds, on every provider and controller of the application, the `@LeaderOnly()` methods
 * (and binds their instances to the application's gates) and the leadership event handlers
 * (and adds them to their election's dispatcher). A method naming an election the application
 * does not have fails the bootstrap here with `UnknownElectionError` (class, method, known
 * names).
 */
@Injectable()
export class LeaderExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('LeaderElection');
  /** Prototypes bound for request-scoped and transient classes; unbound at shutdown. */
  private readonly boundPrototypes: object[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly elections: ElectionDirectory,
  ) {}

  onModuleInit(): void {
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      this.explore(wrapper);
    }
    leaderOnlyBindings.applicationStarted(this.elections.gates);
  }

  onApplicationShutdown(): void {
    leaderOnlyBindings.applicationStopped(this.elections.gates);
    for (const prototype of this.boundPrototypes) {
      leaderOnlyBindings.unbind(prototype, this.elections.gates);
    }
  }

  private explore(wrapper: InstanceWrapper): void {
    const isStatic = wrapper.isDependencyTreeStatic();
    const instance: unknown = wrapper.instance;
    const prototype = providedPrototype(wrapper);
    if (prototype === undefined) return;

    let hasLeaderOnly = false;
    for (const methodName of this.scanner.getAllMethodNames(prototype)) {
      const method: unknown = Reflect.get(prototype, methodName);
      const className = prototype.constructor.name;
      const leaderOnly = leaderMetadata.leaderOnly(method);
      if (leaderOnly) {
        hasLeaderOnly = true;
        // A sharded election's methods run per owned shard: no schedule ledger of their own.
        if (!this.elections.isSharded(leaderOnly.election)) {
          const election = this.elections.get(leaderOnly.election, className, methodName); // or throw
          if (isStatic)
            this.registerLedgerJob(election, instance as object, methodName, method as object);
        }
      }
      for (const { event, election } of leaderMetadata.leadershipEvents(method)) {
        const { orchestrator } = this.elections.get(election, className, methodName);
        const handlerName = `${className}.${methodName}`;
        if (!isStatic) {
          this.logger.warn(nestMessages.nonStaticHandler(handlerName));
          continue;
        }
        orchestrator.events.add(event, {
          name: handlerName,
          call: (payload) =>
            (instance as Record<string, (payload: unknown) => unknown>)[methodName](payload),
        });
      }
    }
    if (!hasLeaderOnly) return;
    const target = isStatic ? (instance as object) : prototype;
    leaderOnlyBindings.bind(target, this.elections.gates);
    if (!isStatic) this.boundPrototypes.push(prototype);
  }

  /**
   * Adds a leader-only method that `@nestjs/schedule` runs as a recurring job (`@Cron`,
   * `@Interval`) to its election's schedule ledger, with its catch-up setting resolved and what
   * the ledger needs to run its late slots through the election's gate.
   */
  private registerLedgerJob(
    election: RegisteredElection,
    instance: object,
    methodName: string,
    method: object,
  ): void {
    const handler = `${instance.constructor.name}.${methodName}`;
    const gated = leaderMetadata.gatedMethod(method);
    if (gated === undefined) return;
    let schedule: JobSchedule | undefined;
    try {
      schedule = readJobSchedule(method, handler);
    } catch (error) {
      this.logger.warn(scheduleMessages.unreadableSchedule(handler, error));
      return;
    }
    if (schedule === undefined) return;
    // As the wrapper's first call would: a late slot reaches the gate without the wrapper.
    gated.kind ??= leaderMetadata.handlerKind(method);
    const { options } = election;
    election.schedule.register({
      ...schedule,
      catchUp: resolveCatchUp(gated.options.catchUp, options.catchUp, options.timings),
      method: gated,
      instance,
      gate: election.gate,
    });
  }
}
