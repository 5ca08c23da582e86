import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { leaderMetadata } from './leader-only/leader-metadata.accessor.js';
import { decoratedClasses } from './decorated-classes.js';
import { nestMessages } from './nest.messages.js';
import { providedPrototype } from './provided-prototype.js';

/** @nestjs/schedule's metadata key on `@Cron`/`@Interval`/`@Timeout` methods (6.x and 12.x). */
const SCHEDULER_TYPE = 'SCHEDULER_TYPE';
/** Providers only `ScheduleModule.forRoot()` registers. */
const SCHEDULE_MODULE_PROVIDERS = new Set(['SchedulerRegistry', 'SchedulerOrchestrator']);
/** How long after bootstrap `app.enableShutdownHooks()` may still come (it often follows `listen()`). */
export const SHUTDOWN_HOOKS_GRACE_MS = 5_000;

/**
 * Warns at bootstrap about set-ups that fail silently, each warning naming the fix:
 * - a class that no module provides, with `@LeaderOnly()` jobs or handlers Nest calls by itself
 *   (`@Cron`/`@Interval`/`@Timeout`, `@OnEvent`, `@MessagePattern`/`@EventPattern`) or with
 *   leadership event handlers: Nest never creates it, so they never run (once per class and
 *   process: a second application in the process may provide it);
 * - `@LeaderOnly()` jobs (`@Cron`/`@Interval`/`@Timeout`) without `ScheduleModule.forRoot()`:
 *   they would never run on any replica;
 * - no SIGTERM handler (`app.enableShutdownHooks()` not called) a few seconds after start:
 *   a rollout's SIGTERM would kill the leader without draining or releasing the Lease.
 * Skipped when `NODE_ENV` is `test` (test runners create applications without shutdown hooks).
 */
@Injectable()
export class LeaderSetupChecker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('LeaderElection');
  private shutdownHooksCheck?: NodeJS.Timeout;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  onApplicationBootstrap(): void {
    this.checkProvidedClasses();
    this.checkScheduleModule();
    if (process.env.NODE_ENV === 'test') return;
    this.shutdownHooksCheck = setTimeout(() => {
      if (process.listenerCount('SIGTERM') === 0) {
        this.logger.warn(nestMessages.shutdownHooksMissing(SHUTDOWN_HOOKS_GRACE_MS));
      }
    }, SHUTDOWN_HOOKS_GRACE_MS);
    this.shutdownHooksCheck.unref();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.shutdownHooksCheck);
  }

  private checkProvidedClasses(): void {
    const provided = [...this.discovery.getProviders(), ...this.discovery.getControllers()]
      .map(providedPrototype)
      .filter((prototype) => prototype !== undefined);
    for (const prototype of decoratedClasses.takeUnprovided(provided)) {
      const className = prototype.constructor.name;
      const methods = Object.getOwnPropertyNames(prototype).flatMap((name) => {
        const calledBy = selfCalledBy(Object.getOwnPropertyDescriptor(prototype, name)?.value);
        return calledBy ? [`${className}.${name}() (${calledBy})`] : [];
      });
      if (methods.length > 0) this.logger.warn(nestMessages.classNotProvided(className, methods));
    }
  }

  private checkScheduleModule(): void {
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    if (wrappers.some((w) => w.metatype && SCHEDULE_MODULE_PROVIDERS.has(w.metatype.name))) return;
    const jobs: string[] = [];
    for (const wrapper of wrappers) {
      const prototype: unknown = wrapper.metatype?.prototype;
      if (typeof prototype !== 'object' || prototype === null) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method: unknown = Reflect.get(prototype, methodName);
        if (typeof method !== 'function' || !leaderMetadata.leaderOnly(method)) continue;
        if (Reflect.getMetadata(SCHEDULER_TYPE, method) !== undefined) {
          jobs.push(`${prototype.constructor.name}.${methodName}()`);
        }
      }
    }
    if (jobs.length > 0) this.logger.warn(nestMessages.scheduleModuleMissing(jobs));
  }
}

/**
 * What calls `method` without any code of the application calling it: `@LeaderOnly()` with a
 * schedule, event or message-pattern decorator, or a leadership event handler; else undefined.
 */
function selfCalledBy(method: unknown): string | undefined {
  if (leaderMetadata.leadershipEvents(method).length > 0) return 'leadership event handler';
  const trigger = leaderMetadata.leaderOnly(method) && leaderMetadata.selfCalledBy(method);
  return trigger ? `@LeaderOnly() ${trigger}` : undefined;
}
