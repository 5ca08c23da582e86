import { LeaderModuleNotImportedError } from '../../errors.js';
import { leaderOnlyBindings } from './leader-only.bindings.js';

const BOOTSTRAP_CHECK = Symbol('nest-leader:bootstrap-check');

/**
 * Makes a Nest-managed instance of the class fail its `onApplicationBootstrap` with
 * `LeaderModuleNotImportedError` when no `LeaderModule` bound it (the explorer binds in
 * `onModuleInit`, which Nest runs for every module before any `onApplicationBootstrap`), so a
 * missing import stops the application at startup instead of at the first gated call.
 * The class's own (or inherited) `onApplicationBootstrap` still runs, after the check.
 * Unknown election names are the explorer's to report (it knows the registered ones).
 */
export function requireLeaderModuleAtBootstrap(prototype: object, methodName: string): void {
  if (Object.prototype.hasOwnProperty.call(prototype, BOOTSTRAP_CHECK)) return;
  Object.defineProperty(prototype, BOOTSTRAP_CHECK, { value: true });
  const own = Object.getOwnPropertyDescriptor(prototype, 'onApplicationBootstrap')?.value as
    ((...args: unknown[]) => unknown) | undefined;
  Object.defineProperty(prototype, 'onApplicationBootstrap', {
    configurable: true,
    writable: true,
    value: function onApplicationBootstrap(this: object, ...args: unknown[]): unknown {
      if (!leaderOnlyBindings.isBound(this)) {
        throw new LeaderModuleNotImportedError(this.constructor?.name, methodName, 'bootstrap');
      }
      const hook =
        own ??
        (Reflect.get(Object.getPrototypeOf(prototype) ?? {}, 'onApplicationBootstrap', this) as
          ((...args: unknown[]) => unknown) | undefined);
      return hook?.apply(this, args);
    },
  });
}
