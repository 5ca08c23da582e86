import { AsyncLocalStorage } from 'node:async_hooks';
import type { LeaderTerm } from './election/leader-elector.options.js';

const storage = new AsyncLocalStorage<LeaderTerm>();

/**
 * The leader term the current `@LeaderOnly()` invocation started under, or `undefined`
 * outside one. Unlike `LeaderElectionService.term` (the term now), it stays the same for the
 * whole invocation, so long-running work can watch `currentTerm()?.signal` — aborted the moment
 * that term ends — and pass `leaseTransitions` downstream as a fencing token.
 */
export function currentTerm(): LeaderTerm | undefined {
  return storage.getStore();
}

/** Runs `run` with `term` as {@link currentTerm}. */
export function runInTerm<T>(term: LeaderTerm, run: () => T): T {
  return storage.run(term, run);
}
