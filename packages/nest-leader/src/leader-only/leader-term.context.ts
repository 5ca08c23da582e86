import { AsyncLocalStorage } from 'node:async_hooks';
import type { LeaderTerm } from '../election/leader-elector.options.js';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';

/** Terms of the `@LeaderOnly()` invocations the current async context runs in, by election. */
const storage = new AsyncLocalStorage<ReadonlyMap<string, LeaderTerm>>();

/**
 * The term of `election` that the current `@LeaderOnly()` invocation started under, or
 * `undefined` outside one (or inside one of another election only). Unlike
 * `LeaderElectionService.term` (the term now), it stays the same for the whole invocation, so
 * long-running work can watch `currentTerm()?.signal` — aborted the moment that term ends — and
 * pass `leaseTransitions` downstream as a fencing token (strictly increasing per Lease).
 * @param election - default `'default'`, the election of `LeaderModule.forRoot()`
 */
export function currentTerm(election: string = DEFAULT_ELECTION_NAME): LeaderTerm | undefined {
  return storage.getStore()?.get(election);
}

/**
 * Runs `run` with `term` as {@link currentTerm}(`election`); terms of other elections the
 * caller runs under stay visible (a leader-only method of one election calling another's).
 */
export function runInTerm<T>(election: string, term: LeaderTerm, run: () => T): T {
  const outer = storage.getStore();
  const terms = new Map(outer);
  terms.set(election, term);
  return storage.run(terms, run);
}
