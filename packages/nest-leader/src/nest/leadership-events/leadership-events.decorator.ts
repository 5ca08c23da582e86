import { LeaderModuleUsageError } from '../../errors.js';
import { decoratedClasses } from '../decorated-classes.js';
import {
  DEFAULT_ELECTION_NAME,
  LEADERSHIP_EVENT_METADATA,
  LeadershipEvent,
} from '../leader.constants.js';
import { nestMessages } from '../nest.messages.js';
import type { LeadershipEventBinding } from './leadership-events.interfaces.js';

function onLeadershipEvent(event: LeadershipEvent, election: string): MethodDecorator {
  return (target, key, descriptor) => {
    if (typeof target === 'function') {
      // The explorer finds handlers on instances: a static one would never be called.
      throw new LeaderModuleUsageError(nestMessages.staticHandler(target.name, String(key)));
    }
    decoratedClasses.add(target);
    const method = descriptor.value as object;
    const bindings: LeadershipEventBinding[] =
      Reflect.getOwnMetadata(LEADERSHIP_EVENT_METADATA, method) ?? [];
    Reflect.defineMetadata(LEADERSHIP_EVENT_METADATA, [...bindings, { event, election }], method);
    return descriptor;
  };
}

/**
 * Calls the method (of a provider or controller) when this replica becomes leader of the
 * election, with the new `LeaderTerm`. Start leader-only background work here and stop it on
 * `term.signal`. Errors are logged; they never affect the election.
 * @param election - default `'default'` (`forRoot()`'s); an unknown name fails at bootstrap
 * @throws LeaderModuleUsageError (when the class is declared) on a static method.
 */
export function OnLeadershipAcquired(election: string = DEFAULT_ELECTION_NAME): MethodDecorator {
  return onLeadershipEvent(LeadershipEvent.Acquired, election);
}

/**
 * Calls the method when this replica's term in the election ends (lost, stepped down, or
 * shutdown), with the ended `LeaderTerm`. The election's Lease is released, or the replica
 * campaigns again, only after the method settles (bounded by `shutdownGraceMs`). Errors are
 * logged.
 * @param election - default `'default'` (`forRoot()`'s); an unknown name fails at bootstrap
 * @throws LeaderModuleUsageError (when the class is declared) on a static method.
 */
export function OnLeadershipLost(election: string = DEFAULT_ELECTION_NAME): MethodDecorator {
  return onLeadershipEvent(LeadershipEvent.Lost, election);
}

/**
 * Calls the method whenever the election's observed leader changes — including to this
 * replica — with the new holder's identity. Errors are logged.
 * @param election - default `'default'` (`forRoot()`'s); an unknown name fails at bootstrap
 * @throws LeaderModuleUsageError (when the class is declared) on a static method.
 */
export function OnLeaderChanged(election: string = DEFAULT_ELECTION_NAME): MethodDecorator {
  return onLeadershipEvent(LeadershipEvent.Changed, election);
}
