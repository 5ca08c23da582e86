/**
 * Order statistics of a small sample (failover times): no interpolation, so every figure is
 * a value that was actually measured.
 */

/** Location and spread of a sample, in milliseconds, rounded to whole ms. */
export interface MsDistribution {
  n: number;
  minMs: number;
  medianMs: number;
  /** Nearest-rank 90th percentile: the ⌈0.9 n⌉-th smallest value. */
  p90Ms: number;
  /** Nearest-rank 99th percentile (the maximum below 100 values). */
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/**
 * Describes `valuesMs`.
 * @throws Error on an empty sample.
 */
export function describeMs(valuesMs: readonly number[]): MsDistribution {
  if (valuesMs.length === 0) throw new Error('describeMs: empty sample');
  const sorted = [...valuesMs].sort((a, b) => a - b);
  const n = sorted.length;
  const mid = Math.floor(n / 2);
  const median = n % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return {
    n,
    minMs: Math.round(sorted[0]!),
    medianMs: Math.round(median),
    p90Ms: Math.round(nearestRank(sorted, 0.9)),
    p99Ms: Math.round(nearestRank(sorted, 0.99)),
    maxMs: Math.round(sorted[n - 1]!),
    meanMs: Math.round(sorted.reduce((sum, v) => sum + v, 0) / n),
  };
}

/** Median of `values` (any unit); `NaN` for an empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function nearestRank(sorted: readonly number[], quantile: number): number {
  const rank = Math.max(1, Math.ceil(quantile * sorted.length));
  return sorted[rank - 1]!;
}
