/**
 * The `holder` label of `leader_election_observed_leader_info`: the holderIdentity a peer wrote
 * into the Lease, made safe as a Prometheus label value. A peer can write any text there, and
 * every distinct value is a new time series in Prometheus: so the values are bounded in form
 * and in number. Framework-free.
 */

/** The label value shown for a holder that is malformed or over the budget. */
export const OTHER_HOLDER_LABEL = '(other)';

/** Bounds of the `holder` label's values. */
export const HOLDER_LABEL_LIMITS = {
  /**
   * New distinct values admitted per election in {@link HOLDER_LABEL_LIMITS.windowMs}: a few
   * rollouts' worth of pod names; a peer renaming itself on every write gets `(other)`.
   */
  maxNewValues: 16,
  /** The window of {@link HOLDER_LABEL_LIMITS.maxNewValues}, ms (one hour). */
  windowMs: 60 * 60 * 1000,
} as const;

/**
 * A holderIdentity shown as itself: at most 253 characters — letters, digits, `.`, `_`, `-`,
 * starting and ending with a letter or digit (pod names, `hostname-pid`, client-go's
 * `hostname_uuid`).
 */
const SHOWN_HOLDER = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$/;

/**
 * Gives each observed holder its label value: the holder itself when it is this candidate,
 * or a well-formed name admitted within the budget ({@link HOLDER_LABEL_LIMITS}: at most 16 new
 * values per election per hour, a value staying admitted for an hour after its admission);
 * {@link OTHER_HOLDER_LABEL} otherwise. So however a peer writes holderIdentity, one election
 * adds at most 17 series an hour (16 names and `(other)`) beside the candidate's own.
 */
export class HolderLabelValues {
  /** Per election: admitted values and when they were admitted (monotonic ms). */
  private readonly admitted = new Map<string, Map<string, number>>();

  /**
   * @param election - the election's name
   * @param holder - the observed holderIdentity (not `''`)
   * @param self - this candidate's identity
   * @param nowMs - a monotonic clock, ms
   */
  valueFor(election: string, holder: string, self: string, nowMs: number): string {
    if (holder === self) return holder;
    if (!SHOWN_HOLDER.test(holder)) return OTHER_HOLDER_LABEL;
    let values = this.admitted.get(election);
    if (values === undefined) {
      values = new Map();
      this.admitted.set(election, values);
    }
    for (const [value, admittedAtMs] of values) {
      if (nowMs - admittedAtMs >= HOLDER_LABEL_LIMITS.windowMs) values.delete(value);
    }
    if (values.has(holder)) return holder;
    if (values.size >= HOLDER_LABEL_LIMITS.maxNewValues) return OTHER_HOLDER_LABEL;
    values.set(holder, nowMs);
    return holder;
  }
}
