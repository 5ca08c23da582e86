import { AsyncLocalStorage } from 'node:async_hooks';
import type { LeaderTerm } from '../../core/leader-elector.options.js';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';

/**
 * The terms of the `@LeaderOnly()` invocations the current async context runs in, innermost
 * first: usually one frame; a chain when leader-only work of one election calls another's.
 * (One small object per invocation, cheaper than copying a map on the hot path.)
 */
interface TermFrame {
  readonly election: string;
  readonly term: LeaderTerm;
  readonly outer: TermFrame | undefined;
}

const storage = new AsyncLocalStorage<TermFrame>();

/**
 * The term of `election` that the current `@LeaderOnly()` invocation started under, or
 * `undefined` outside one (or inside one of another election only). Unlike
 * `LeaderElectionService.term` (the term now), it stays the same for the whole invocation, so
 * long-running work can watch `currentTerm()?.signal` — aborted the moment that term ends — and
 * pass `leaseTransitions` downstream as a fencing token (strictly increasing per Lease).
 * @param election - default `'default'`, the election of `LeaderModule.forRoot()`
 */
export function currentTerm(election: string = DEFAULT_ELECTION_NAME): LeaderTerm | undefined {
  for (let frame = storage.getStore(); frame; frame = frame.outer) {
    if (frame.election === election) return frame.term;
  }
  return undefined;
}

/**
 * Calls `fn` on `thisArg` with `args`, with `term` as {@link currentTerm}(`election`); terms of
 * other elections the caller runs under stay visible (a leader-only method of one election
 * calling another's). Returns what `fn` returns, throws what it throws.
 */
export function runInTerm(
  election: string,
  term: LeaderTerm,
  fn: (...args: unknown[]) => unknown,
  thisArg: unknown,
  args: unknown[],
): unknown {
  const outer = storage.getStore();
  // Already inside this very term (a leader-only method calling another of the same
  // election): currentTerm() would read the same, so skip entering a new context.
  if (outer !== undefined && outer.term === term && outer.election === election) {
    return fn.apply(thisArg, args);
  }
  // A closure, not run(store, fn, ...args): Node's rest-argument path measured slower.
  return storage.run({ election, term, outer }, () => fn.apply(thisArg, args));
}
