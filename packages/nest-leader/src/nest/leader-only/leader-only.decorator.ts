import { UseFilters } from '@nestjs/common';
import { InvalidLeaderElectionOptionError, LeaderModuleUsageError } from '../../errors.js';
import {
  DEFAULT_ELECTION_NAME,
  LEADER_ONLY_METADATA,
  LEADER_ONLY_METHOD_METADATA,
} from '../leader.constants.js';
import { decoratedClasses } from '../decorated-classes.js';
import { validateCatchUp } from '../schedule/catch-up.options.js';
import { nestMessages } from '../nest.messages.js';
import { copyMethodMetadata } from './copy-method-metadata.util.js';
import { leaderMetadata } from './leader-metadata.accessor.js';
import { leaderOnlyBindings } from './leader-only.bindings.js';
import { requireLeaderModuleAtBootstrap } from './leader-only.bootstrap-check.js';
import type {
  LeaderOnlyGateLike,
  LeaderOnlyMetadata,
  LeaderOnlyMethod,
  LeaderOnlyOptions,
} from './leader-only.interfaces.js';
import { NotLeaderExceptionFilter } from './not-leader.filter.js';

/** Nest lifecycle hooks a class-level `@LeaderOnly()` leaves alone: they must run on every replica. */
const LIFECYCLE_HOOKS = new Set([
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/**
 * Runs the method only while this replica leads the election, checked at call time (the lease
 * deadline is re-checked then, so a paused process never runs work on a stale term).
 * Leadership is decided by the election of the Nest application that created the instance:
 * `forRoot()`'s (`'default'`) unless a name is given — `@LeaderOnly('shard-a')` or
 * `@LeaderOnly({ election: 'shard-a', onFollower })` — for an election registered with
 * `LeaderModule.registerElection()`. A name the application does not know fails at bootstrap
 * with `UnknownElectionError`. The class must be in a module's `providers` (or `controllers`):
 * a class with `@Cron`/`@Interval`/`@Timeout`, `@OnEvent` or message-pattern methods that no
 * module provides gets one warning at bootstrap; calling the method on an instance Nest did not
 * create throws `LeaderOnlyInstanceNotProvidedError` (`LeaderModuleNotImportedError` when no
 * `LeaderModule` runs).
 *
 * On a method: gates that method. On a class: gates every method declared in the class body,
 * except Nest lifecycle hooks, leadership event handlers and methods with their own
 * `@LeaderOnly()`.
 *
 * Order with other decorators does not matter: the wrapper carries every metadata key, the
 * name and the length of the original, so `@Cron`, `@Interval`, `@Timeout`, `@OnEvent`,
 * `@Get`…, `@MessagePattern`, `@EventPattern` register it as before. Arguments, `this`,
 * return values and errors pass through unchanged; while it runs, `currentTerm(election)`
 * returns the term it started under, and shutdown waits for it (up to the election's
 * `shutdownGraceMs`) before the election's Lease is released.
 *
 * On a recurring job (`@Cron` with an expression, `@Interval`), each run is one scheduled
 * slot, recorded in the election's schedule ledger (`currentSlot()` returns it), and
 * `catchUp` says what a new leader does about slots that fell due while no leader ran them
 * (see {@link LeaderOnlyOptions.catchUp}).
 * @param electionOrOptions - an election name, or {@link LeaderOnlyOptions}
 * @throws LeaderModuleUsageError (when the class is declared) on anything but a method or a
 *   class, and on a static method (no instance for `LeaderModule` to bind).
 *
 * @example
 * ```ts
 * @LeaderOnly()
 * @Cron(CronExpression.EVERY_MINUTE)
 * async closeInvoices() {}
 *
 * @LeaderOnly('shard-a')
 * @Interval(5_000)
 * reconcileShardA() {}
 *
 * @LeaderOnly({ catchUp: 'once' }) // a failover at 02:00 still closes the day
 * @Cron('0 2 * * *')
 * async closeDay() {}
 * ```
 */
export function LeaderOnly(
  electionOrOptions: string | LeaderOnlyOptions = {},
): ClassDecorator & MethodDecorator {
  const given =
    typeof electionOrOptions === 'string' ? { election: electionOrOptions } : electionOrOptions;
  const options: LeaderOnlyMetadata = {
    election: given.election ?? DEFAULT_ELECTION_NAME,
    onFollower: given.onFollower,
    verify: validateVerify(given.verify),
    catchUp: validateCatchUp(given.catchUp),
  };
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (key === undefined || descriptor === undefined) decorateClass(target, options);
    else gateMethod(target, key, descriptor, options);
  };
}

function validateVerify(verify: unknown): LeaderOnlyMetadata['verify'] {
  if (verify === undefined || verify === 'before' || verify === 'before-and-after') return verify;
  throw new InvalidLeaderElectionOptionError('verify', nestMessages.verifyRule, verify);
}

function decorateClass(target: object, options: LeaderOnlyMetadata): void {
  const prototype = (target as { prototype: object }).prototype;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name)!;
    const method = descriptor.value;
    if (
      name === 'constructor' ||
      LIFECYCLE_HOOKS.has(name) ||
      typeof method !== 'function' ||
      leaderMetadata.leaderOnly(method) ||
      leaderMetadata.leadershipEvents(method).length > 0
    ) {
      continue;
    }
    gateMethod(prototype, name, descriptor, options);
    Object.defineProperty(prototype, name, descriptor);
  }
}

/** Replaces `descriptor.value` with the gated wrapper. */
function gateMethod(
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor,
  options: LeaderOnlyMetadata,
): void {
  const original: unknown = descriptor.value;
  if (typeof original !== 'function') {
    throw new LeaderModuleUsageError(nestMessages.leaderOnlyTarget(String(key)));
  }
  const methodName = String(key);
  if (typeof target === 'function') {
    // A static method has no instance for LeaderModule to bind: it could never find its gate.
    throw new LeaderModuleUsageError(nestMessages.leaderOnlyStatic(target.name, methodName));
  }
  decoratedClasses.add(target);
  const method: LeaderOnlyMethod = {
    methodName,
    site: { handler: `${target.constructor.name}.${methodName}` },
    isAsync: Object.prototype.toString.call(original) === '[object AsyncFunction]',
    options,
    original: original as (...args: unknown[]) => unknown,
    kind: undefined,
  };

  const wrapper = function (this: object, ...args: unknown[]): unknown {
    // Read at the first call: decorators listed above this one (`@Get`…) run after it.
    method.kind ??= leaderMetadata.handlerKind(wrapper);
    let gate: LeaderOnlyGateLike;
    try {
      gate = leaderOnlyBindings.gateFor(this, methodName, options.election);
    } catch (error) {
      if (method.isAsync) return Promise.reject(error);
      throw error;
    }
    return gate.invoke(method, this, args);
  };
  copyMethodMetadata(original, wrapper);
  Reflect.defineMetadata(LEADER_ONLY_METADATA, options, wrapper);
  Reflect.defineMetadata(LEADER_ONLY_METHOD_METADATA, method, wrapper);
  descriptor.value = wrapper;
  requireLeaderModuleAtBootstrap(target, methodName);
  // Route handlers answer 503 with Retry-After; the filter only catches NotLeaderException.
  UseFilters(NotLeaderExceptionFilter)(target, key, descriptor);
}
