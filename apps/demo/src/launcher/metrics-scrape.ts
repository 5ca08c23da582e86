/**
 * The launcher's view of each replica's GET /metrics: scraped like Prometheus would, parsed
 * with parse-prometheus-text-format, and summed up per election for the end summary (does each
 * replica's count of leader changes agree with the Lease?).
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** What one replica reported for one election in its last scrape. */
export interface ElectionMetricsSnapshot {
  masterStatus: number;
  termsStarted: number;
  transitions: number;
  lockErrors: number;
  leaderOnlyRan: number;
  leaderOnlySkipped: number;
}

/** Per election name. */
export type ReplicaMetrics = Map<string, ElectionMetricsSnapshot>;

/**
 * Scrapes `http://127.0.0.1:<port>/metrics`; `undefined` if the replica does not answer within
 * `timeoutMs` (down, starting) or serves no metrics.
 */
export async function scrapeReplica(
  port: number,
  timeoutMs = 800,
): Promise<ReplicaMetrics | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return undefined;
    return summarizeMetrics(await response.text());
  } catch {
    return undefined;
  }
}

/** The leader-election metrics of a scrape, per election. */
export function summarizeMetrics(text: string): ReplicaMetrics {
  const elections: ReplicaMetrics = new Map();
  const of = (name: string) => {
    let snapshot = elections.get(name);
    if (!snapshot) {
      snapshot = {
        masterStatus: 0,
        termsStarted: 0,
        transitions: 0,
        lockErrors: 0,
        leaderOnlyRan: 0,
        leaderOnlySkipped: 0,
      };
      elections.set(name, snapshot);
    }
    return snapshot;
  };
  for (const family of parsePrometheusTextFormat(text)) {
    // Only the elections' families: the sharded election's (nest_leader_shard*) carry a `name`
    // too, and would show as an election that never led.
    if (!family.name.startsWith('leader_election_')) continue;
    for (const sample of family.metrics) {
      const election = sample.labels?.name;
      const value = Number(sample.value);
      if (election === undefined || !Number.isFinite(value)) continue;
      const snapshot = of(election);
      switch (family.name) {
        case 'leader_election_master_status':
          snapshot.masterStatus = value;
          break;
        case 'leader_election_terms_started_total':
          snapshot.termsStarted += value; // one series per reason
          break;
        case 'leader_election_transitions_total':
          snapshot.transitions = value;
          break;
        case 'leader_election_lock_errors_total':
          snapshot.lockErrors += value;
          break;
        case 'leader_election_leader_only_calls_total':
          if (sample.labels?.outcome === 'ran') snapshot.leaderOnlyRan += value;
          else snapshot.leaderOnlySkipped += value;
          break;
      }
    }
  }
  return elections;
}
