import { UseFilters } from '@nestjs/common';
import { LEADER_ONLY_METADATA } from '../leader.constants.js';
import { type HandlerKind, leaderMetadata } from '../leader-metadata.accessor.js';
import type { LeaderOnlyGate } from '../leader-only.gate.js';
import { leaderOnlyRegistry } from '../leader-only.registry.js';
import { NotLeaderExceptionFilter } from '../not-leader.filter.js';
import { copyMethodMetadata } from './copy-method-metadata.util.js';

/** What a `@LeaderOnly()` call sees when this replica is not the leader. */
export interface FollowerContext {
  /** The instance the method was called on. */
  readonly instance: object;
  readonly methodName: string;
  /** The call's arguments, as received. */
  readonly args: readonly unknown[];
  /** What the method is to Nest (route handler, message handler, or other). */
  readonly kind: HandlerKind;
  /** This replica's identity. */
  readonly identity: string;
  /** The current leader's identity, if one is known. */
  readonly leader: string | undefined;
}

/**
 * What a `@LeaderOnly()` method does when called on a follower:
 * - `'skip'`: do not run; return `undefined` (a resolved promise for `async` methods) and log
 *   at debug level.
 * - `'throw'`: do not run; throw (reject, for `async` methods) an error fit for the caller:
 *   an `RpcException` for message handlers, a {@link NotLeaderException} (HTTP 503) otherwise.
 * - a function: do not run; return what the function returns instead.
 */
export type FollowerBehaviour = 'skip' | 'throw' | ((context: FollowerContext) => unknown);

/** Options of {@link LeaderOnly}. */
export interface LeaderOnlyOptions {
  /**
   * Behaviour on a follower. Default: `'throw'` for route handlers (`@Get`…: HTTP 503 with
   * `Retry-After`) and message handlers (`@MessagePattern`/`@EventPattern`: `RpcException`),
   * `'skip'` for everything else (`@Cron`, `@Interval`, `@Timeout`, `@OnEvent`, plain calls).
   */
  onFollower?: FollowerBehaviour;
}

/** Nest lifecycle hooks a class-level `@LeaderOnly()` leaves alone: they must run on every replica. */
const LIFECYCLE_HOOKS = new Set([
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/**
 * Runs the method only while this replica is the leader, checked at call time (the lease
 * deadline is re-checked then, so a paused process never runs work on a stale term).
 * Leadership is decided by the `LeaderElectionService` of the Nest application that created
 * the instance; calling the method on an instance no `LeaderModule` knows about throws
 * `LeaderModuleNotImportedError`.
 *
 * On a method: gates that method. On a class: gates every method declared in the class body,
 * except Nest lifecycle hooks, leadership event handlers and methods with their own
 * `@LeaderOnly()`.
 *
 * Order with other decorators does not matter: the wrapper carries every metadata key, the
 * name and the length of the original, so `@Cron`, `@Interval`, `@Timeout`, `@OnEvent`,
 * `@Get`…, `@MessagePattern`, `@EventPattern` register it as before. Arguments, `this`,
 * return values and errors pass through unchanged; while it runs, {@link currentTerm} returns
 * the term it started under, and shutdown waits for it (up to `shutdownGraceMs`) before the
 * Lease is released.
 *
 * @example
 * ```ts
 * @LeaderOnly()
 * @Cron(CronExpression.EVERY_MINUTE)
 * async closeInvoices() {}
 * ```
 */
export function LeaderOnly(options: LeaderOnlyOptions = {}): ClassDecorator & MethodDecorator {
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (key === undefined || descriptor === undefined) decorateClass(target, options);
    else gateMethod(target, key, descriptor, options);
  };
}

function decorateClass(target: object, options: LeaderOnlyOptions): void {
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
  options: LeaderOnlyOptions,
): void {
  const original: unknown = descriptor.value;
  if (typeof original !== 'function') {
    throw new TypeError(`@LeaderOnly() applies to methods and classes, not to "${String(key)}".`);
  }
  const methodName = String(key);
  const isAsync = Object.prototype.toString.call(original) === '[object AsyncFunction]';
  let kind: HandlerKind | undefined;

  const wrapper = function (this: object, ...args: unknown[]): unknown {
    kind ??= leaderMetadata.handlerKind(wrapper);
    let gate: LeaderOnlyGate;
    try {
      gate = leaderOnlyRegistry.gateFor(this, methodName);
    } catch (error) {
      if (isAsync) return Promise.reject(error);
      throw error;
    }
    return gate.invoke({
      instance: this,
      methodName,
      args,
      kind,
      isAsync,
      options,
      run: () => original.apply(this, args),
    });
  };
  copyMethodMetadata(original, wrapper);
  Reflect.defineMetadata(LEADER_ONLY_METADATA, options, wrapper);
  descriptor.value = wrapper;
  requireLeaderModuleAtBootstrap(target, methodName);
  // Route handlers answer 503 with Retry-After; the filter only catches NotLeaderException.
  UseFilters(NotLeaderExceptionFilter)(target, key, descriptor);
}

const BOOTSTRAP_CHECK = Symbol('nest-leader:bootstrap-check');

/**
 * Makes a Nest-managed instance of the class fail its `onApplicationBootstrap` with
 * `LeaderModuleNotImportedError` when no `LeaderModule` bound it (the explorer binds in
 * `onModuleInit`, which Nest runs for every module before any `onApplicationBootstrap`), so a
 * missing import stops the application at startup instead of at the first gated call.
 * The class's own (or inherited) `onApplicationBootstrap` still runs, after the check.
 */
function requireLeaderModuleAtBootstrap(prototype: object, methodName: string): void {
  if (Object.prototype.hasOwnProperty.call(prototype, BOOTSTRAP_CHECK)) return;
  Object.defineProperty(prototype, BOOTSTRAP_CHECK, { value: true });
  const own = Object.getOwnPropertyDescriptor(prototype, 'onApplicationBootstrap')?.value as
    ((...args: unknown[]) => unknown) | undefined;
  Object.defineProperty(prototype, 'onApplicationBootstrap', {
    configurable: true,
    writable: true,
    value: function onApplicationBootstrap(this: object, ...args: unknown[]): unknown {
      leaderOnlyRegistry.gateFor(this, methodName);
      const hook =
        own ??
        (Reflect.get(Object.getPrototypeOf(prototype) ?? {}, 'onApplicationBootstrap', this) as
          ((...args: unknown[]) => unknown) | undefined);
      return hook?.apply(this, args);
    },
  });
}
