import type { LeaderTerm } from 'nest-leader';
import type { Registry } from 'prom-client';

/** One sample of a metric, as prom-client reports it. */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** Every sample of `name` in `registry` (histograms: every `_bucket`, `_sum` and `_count`). */
export async function samples(registry: Registry, name: string): Promise<Sample[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`metric ${name} is not registered`);
  return (await metric.get()).values as Sample[];
}

/**
 * The value of the sample of `name` whose labels are exactly `labels` (plus `le` for a histogram
 * sample named `sampleName`), or `undefined` when there is none.
 */
export async function value(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
  sampleName?: string,
): Promise<number | undefined> {
  const matching = (await samples(registry, name)).filter(
    (s) =>
      (sampleName === undefined || s.metricName === sampleName) &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => String(s.labels[k]) === v),
  );
  if (matching.length > 1) throw new Error(`${matching.length} samples of ${name} match`);
  return matching[0]?.value;
}

/** A term as the elector would hand it out. */
export function term(leaseTransitions: number): LeaderTerm {
  return {
    leaseTransitions,
    acquiredAt: new Date('2026-01-01T00:00:00Z'),
    signal: new AbortController().signal,
    isLive: () => true,
    throwIfEnded: () => undefined,
  };
}
