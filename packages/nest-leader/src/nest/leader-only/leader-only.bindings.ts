import {
  LeaderModuleNotImportedError,
  LeaderOnlyBindingConflictError,
  LeaderOnlyInstanceNotProvidedError,
  UnknownElectionError,
} from '../../errors.js';
import type { LeaderOnlyGateLike, LeaderOnlyGates } from './leader-only.interfaces.js';

/**
 * The link from a `@LeaderOnly()` wrapper, which runs without dependency injection, to the
 * gates of the Nest application that created the instance. `LeaderExplorer` binds each
 * instance with `@LeaderOnly()` methods when its application initializes: the instance itself
 * (the class prototype for request-scoped and transient providers) carries a hidden reference
 * to that application's gates, so several applications in one process each keep their own
 * elections, and no process-wide map exists that a second application could overwrite. An
 * object bound by two live applications is refused ({@link LeaderOnlyBindingConflictError}).
 */
const GATES = Symbol('nest-leader:leader-only-gates');

type Bindable = object & { [GATES]?: LeaderOnlyGates };

/**
 * The gates of the applications whose `LeaderModule` has initialized and not shut down: only
 * to tell, for an unbound instance, "no LeaderModule runs" from "Nest did not create this one".
 */
const liveApplications = new Set<LeaderOnlyGates>();

export const leaderOnlyBindings = {
  /**
   * Makes `gates` decide for `target` and every object that inherits from it.
   * @throws LeaderOnlyBindingConflictError if another application's gates are bound to it.
   */
  bind(target: object, gates: LeaderOnlyGates): void {
    const bound = Object.getOwnPropertyDescriptor(target, GATES)?.value as
      LeaderOnlyGates | undefined;
    if (bound === gates) return;
    if (bound !== undefined) throw new LeaderOnlyBindingConflictError(className(target));
    Object.defineProperty(target, GATES, { value: gates, configurable: true });
  },

  /** Undoes {@link leaderOnlyBindings.bind} if `gates` are the ones bound to `target`. */
  unbind(target: object, gates: LeaderOnlyGates): void {
    if (Object.getOwnPropertyDescriptor(target, GATES)?.value === gates) {
      delete (target as Bindable)[GATES];
    }
  },

  /** An application's `LeaderModule` initialized: its gates decide for the instances it binds. */
  applicationStarted(gates: LeaderOnlyGates): void {
    liveApplications.add(gates);
  },

  /** The application shut down (undoes {@link leaderOnlyBindings.applicationStarted}). */
  applicationStopped(gates: LeaderOnlyGates): void {
    liveApplications.delete(gates);
  },

  /** True if some application's gates decide for `instance`. */
  isBound(instance: unknown): boolean {
    return isObject(instance) && (instance as Bindable)[GATES] !== undefined;
  },

  /**
   * The gate of `election` for `instance` (bound on it or along its prototype chain).
   * @throws LeaderOnlyInstanceNotProvidedError if no application bound it while one runs
   *   (Nest did not create the instance).
   * @throws LeaderModuleNotImportedError if no application bound it and none runs.
   * @throws UnknownElectionError if its application has no such election.
   */
  gateFor(instance: unknown, methodName: string, election: string): LeaderOnlyGateLike {
    const gates = isObject(instance) ? (instance as Bindable)[GATES] : undefined;
    if (!gates) {
      throw liveApplications.size > 0
        ? new LeaderOnlyInstanceNotProvidedError(className(instance), methodName)
        : new LeaderModuleNotImportedError(className(instance), methodName);
    }
    const gate = gates.get(election);
    if (!gate) {
      throw new UnknownElectionError(election, [...gates.keys()], className(instance), methodName);
    }
    return gate;
  },
};

function isObject(value: unknown): value is object {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}

function className(instance: unknown): string | undefined {
  return isObject(instance) ? instance.constructor?.name : undefined;
}
