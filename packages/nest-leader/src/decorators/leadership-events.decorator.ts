import { LEADERSHIP_EVENT_METADATA, LeadershipEvent } from '../leader.constants.js';

function onLeadershipEvent(event: LeadershipEvent): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as object;
    const events: LeadershipEvent[] =
      Reflect.getOwnMetadata(LEADERSHIP_EVENT_METADATA, method) ?? [];
    Reflect.defineMetadata(LEADERSHIP_EVENT_METADATA, [...events, event], method);
    return descriptor;
  };
}

/**
 * Calls the method (of a provider or controller) when this replica becomes leader, with the
 * new `LeaderTerm`. Start leader-only background work here and stop it on `term.signal`.
 * Errors are logged; they never affect the election.
 */
export function OnLeadershipAcquired(): MethodDecorator {
  return onLeadershipEvent(LeadershipEvent.Acquired);
}

/**
 * Calls the method when this replica's term ends (lost, stepped down, or shutdown), with the
 * ended `LeaderTerm`. The Lease is released, or the replica campaigns again, only after the
 * method settles (bounded by `shutdownGraceMs`). Errors are logged.
 */
export function OnLeadershipLost(): MethodDecorator {
  return onLeadershipEvent(LeadershipEvent.Lost);
}

/**
 * Calls the method whenever the observed leader changes — including to this replica — with
 * the new holder's identity. Errors are logged.
 */
export function OnLeaderChanged(): MethodDecorator {
  return onLeadershipEvent(LeadershipEvent.Changed);
}
