import { LeaderModuleNotImportedError } from './errors.js';
import type { LeaderOnlyGate } from './leader-only.gate.js';

/**
 * Which `LeaderOnlyGate` decides for a given instance: the link from a `@LeaderOnly()` wrapper,
 * which runs without dependency injection, to the `LeaderModule` of the application that
 * created the instance.
 *
 * `LeaderExplorer` binds every instance with `@LeaderOnly()` methods when the application
 * initializes (the instance itself, so several applications in one process each keep their
 * own elector; the class prototype for request-scoped and transient providers). A call on an
 * instance nobody bound — `LeaderModule` not imported, the app not initialized yet, or an
 * instance created with `new` — throws `LeaderModuleNotImportedError`.
 */
const bindings = new WeakMap<object, LeaderOnlyGate>();

/** The module-level registry; see above. */
export const leaderOnlyRegistry = {
  /** Makes `gate` decide for `target` and every object that inherits from it. */
  bind(target: object, gate: LeaderOnlyGate): void {
    bindings.set(target, gate);
  },

  /**
   * The gate for `instance`: the nearest binding along its prototype chain.
   * @throws LeaderModuleNotImportedError if there is none.
   */
  gateFor(instance: unknown, methodName: string): LeaderOnlyGate {
    for (
      let target = instance;
      typeof target === 'object' && target !== null;
      target = Object.getPrototypeOf(target)
    ) {
      const gate = bindings.get(target);
      if (gate) return gate;
    }
    throw new LeaderModuleNotImportedError(describeInstance(instance), methodName);
  },
};

function describeInstance(instance: unknown): string | undefined {
  return typeof instance === 'object' && instance !== null ? instance.constructor?.name : undefined;
}
