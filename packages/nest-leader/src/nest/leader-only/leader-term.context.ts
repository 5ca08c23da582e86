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
  /** The scheduled slot the invocation runs, for a leader-only recurring job. */
  readonly slot: ScheduledSlot | undefined;
  readonly outer: TermFrame | undefined;
}

/**
 * One scheduled run of a leader-only recurring job (`@Cron`, `@Interval`): its identity — the
 * job's name and the scheduled time — and the fencing token of the term that runs it. The
 * same `job` + `scheduledAt` may run again after a failover (a redo, or a late run under the
 * catch-up policy): key side effects on it and check `token` to make them exactly-once.
 */
export interface ScheduledSlot {
  /** `@Cron`'s / `@Interval`'s `name` if given, else `Class.method`. */
  readonly job: string;
  /** When the slot was scheduled (wall clock), not when it runs. */
  readonly scheduledAt: Date;
  /** `leaseTransitions` of the term that runs it (see `LeaderTerm`). */
  readonly token: number;
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
 * The scheduled slot the current `@LeaderOnly()` invocation of a recurring job (`@Cron`,
 * `@Interval`) of `election` runs — `{ job, scheduledAt, token }` — or `undefined` outside
 * one. Use it to make a job's side effects idempotent per slot (see the package's
 * docs/schedule-ledger.md).
 * @param election - default `'default'`, the election of `LeaderModule.forRoot()`
 */
export function currentSlot(election: string = DEFAULT_ELECTION_NAME): ScheduledSlot | undefined {
  for (let frame = storage.getStore(); frame; frame = frame.outer) {
    if (frame.election === election) return frame.slot;
  }
  return undefined;
}

/**
 * Calls `fn` on `thisArg` with `args`, with `term` as {@link currentTerm}(`election`) and
 * `slot` as {@link currentSlot}(`election`); terms of other elections the caller runs under
 * stay visible (a leader-only method of one election calling another's). Returns what `fn`
 * returns, throws what it throws.
 */
export function runInTerm(
  election: string,
  term: LeaderTerm,
  fn: (...args: unknown[]) => unknown,
  thisArg: unknown,
  args: unknown[],
  slot?: ScheduledSlot,
): unknown {
  const outer = storage.getStore();
  // Already inside this very term (a leader-only method calling another of the same
  // election): currentTerm() would read the same, so skip entering a new context.
  if (
    slot === undefined &&
    outer !== undefined &&
    outer.term === term &&
    outer.election === election
  ) {
    return fn.apply(thisArg, args);
  }
  // A closure, not run(store, fn, ...args): Node's rest-argument path measured slower.
  return storage.run({ election, term, slot, outer }, () => fn.apply(thisArg, args));
}
