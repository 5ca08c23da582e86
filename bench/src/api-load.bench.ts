/**
 * Load on the API server in steady state: 3 candidates with the default timings on one Lease,
 * requests counted per identity and verb from the control plane's audit log.
 *
 * Expected, from the algorithm: the leader renews every retryPeriod with a PUT of its cached
 * object (no GET) → ≈ 60 / retryPeriod updates/min; each follower GETs every
 * retryPeriod × [1, 1.2) → ≈ 60 / (1.1 × retryPeriod) GETs/min.
 */
import {
  makeCandidates,
  waitForLeader,
  type Candidate,
  type LeadershipRecord,
} from '@nest-leader/test/support/candidates.js';
import {
  readAuditEvents,
  uniqueLeaseName,
  type AuditEvent,
} from '@nest-leader/test/support/cluster.js';
import type { ClusterInfo } from '@nest-leader/test/support/control-plane.js';
import type { LeaderElectionTimings } from 'nest-leader';
import { ACQUIRE_JITTER } from 'nest-leader/core';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { withControlPlane } from './support/control-plane.js';
import { writeResults } from './support/results.js';
import { sleep } from './support/sleep.js';

const IDENTITIES = ['alice', 'bob', 'carol'] as const;
/** The library's defaults, spelled out so the figures stay tied to them. */
const TIMINGS: LeaderElectionTimings = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};
const RETRY_MS = TIMINGS.retryPeriodSeconds * 1000;
/** After the first leader appears: followers' first GETs and the leader's first renewals. */
const WARMUP_MS = 2 * RETRY_MS + 1000;

interface VerbCount {
  count: number;
  /** count / window length. Quantized: ±1 request is ±1/min over 60 s. */
  perMinute: number;
  /** Mean time between consecutive requests of this verb (not quantized), ms. */
  meanIntervalMs?: number;
}

interface IdentityLoad {
  identity: string;
  username: string;
  role: 'leader' | 'follower';
  /** Per verb (`get`, `update`, `create`…). */
  verbs: Record<string, VerbCount>;
  /** Responses that were not 2xx, per HTTP code (409 = lost a race). */
  nonSuccess: Record<string, number>;
}

interface ApiLoadResult {
  windowSeconds: number;
  leader: string;
  /** Leadership changes inside the window (0 for a steady state). */
  leadershipChanges: number;
  identities: IdentityLoad[];
  totalPerMinute: number;
  expected: {
    leaderUpdatesPerMinute: string;
    leaderGetsPerMinute: number;
    followerGetsPerMinute: string;
  };
}

export const apiLoadBench: Benchmark = {
  name: 'api-load',
  description: 'requests/min per identity and verb in steady state (audit log), default timings',
  settings: ['seconds'],
  async run(settings: BenchSettings, command: string): Promise<void> {
    const result = await withControlPlane(IDENTITIES, (cluster) =>
      measureSteadyState(cluster, settings.seconds),
    );
    const summary = summarize(result);
    const path = writeResults({
      benchmark: 'api-load',
      measures:
        'coordination.k8s.io requests per minute per identity and verb, from the audit log, ' +
        'while 3 candidates hold a steady election',
      command,
      parameters: {
        candidates: IDENTITIES,
        timings: TIMINGS,
        windowSeconds: settings.seconds,
        warmupMs: WARMUP_MS,
      },
      results: result,
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`  → ${path}`);
  },
};

async function measureSteadyState(cluster: ClusterInfo, seconds: number): Promise<ApiLoadResult> {
  const leaseName = uniqueLeaseName('bench-api-load');
  const history: LeadershipRecord[] = [];
  const candidates: Candidate[] = makeCandidates(cluster, leaseName, IDENTITIES, history, {
    timings: TIMINGS,
  });
  let windowStart: Date;
  let windowEnd: Date;
  let leader: Candidate;
  let changes: number;
  try {
    for (const candidate of candidates) candidate.elector.start();
    await waitForLeader(candidates, 60_000);
    await sleep(WARMUP_MS);
    leader = await waitForLeader(candidates, 1_000);
    const startMs = performance.now();
    windowStart = new Date();
    console.log(`  leader ${leader.identity}; measuring ${seconds} s of steady state…`);
    await sleep(seconds * 1000);
    windowEnd = new Date();
    changes = history.filter((r) => r.atMs >= startMs).length;
  } finally {
    await Promise.all(candidates.map((c) => c.elector.stop()));
  }

  const events = readAuditEvents(cluster).filter((e) => {
    const at = Date.parse(e.requestReceivedTimestamp);
    return e.objectRef?.name === leaseName && at >= +windowStart && at < +windowEnd;
  });
  const windowMinutes = (+windowEnd - +windowStart) / 60_000;
  const identities = IDENTITIES.map((identity) =>
    loadOf(cluster, identity, identity === leader.identity, events, windowMinutes),
  );
  const meanRetryMs = RETRY_MS * (1 + ACQUIRE_JITTER / 2);
  return {
    windowSeconds: Math.round(windowMinutes * 600) / 10,
    leader: leader.identity,
    leadershipChanges: changes,
    identities,
    totalPerMinute: round1(events.length / windowMinutes),
    expected: {
      leaderUpdatesPerMinute: `≤ ${60_000 / RETRY_MS} (60 s / retryPeriod, minus request time)`,
      leaderGetsPerMinute: 0,
      followerGetsPerMinute:
        `≈ ${round1(60_000 / meanRetryMs)} (60 s / (${1 + ACQUIRE_JITTER / 2} × retryPeriod)), ` +
        `range ${round1(60_000 / (RETRY_MS * (1 + ACQUIRE_JITTER)))}–${60_000 / RETRY_MS}`,
    },
  };
}

function loadOf(
  cluster: ClusterInfo,
  identity: string,
  isLeader: boolean,
  events: readonly AuditEvent[],
  windowMinutes: number,
): IdentityLoad {
  const username = cluster.identities[identity]!.username;
  const verbs: Record<string, VerbCount> = {};
  const receivedMs: Record<string, number[]> = {};
  const nonSuccess: Record<string, number> = {};
  for (const event of events.filter((e) => e.user.username === username)) {
    (receivedMs[event.verb] ??= []).push(Date.parse(event.requestReceivedTimestamp));
    const code = event.responseStatus?.code ?? 0;
    if (code < 200 || code > 299) nonSuccess[code] = (nonSuccess[code] ?? 0) + 1;
  }
  for (const [verb, times] of Object.entries(receivedMs)) {
    times.sort((a, b) => a - b);
    verbs[verb] = {
      count: times.length,
      perMinute: round1(times.length / windowMinutes),
      ...(times.length > 1 && {
        meanIntervalMs: Math.round((times.at(-1)! - times[0]!) / (times.length - 1)),
      }),
    };
  }
  return { identity, username, role: isLeader ? 'leader' : 'follower', verbs, nonSuccess };
}

function summarize(r: ApiLoadResult): string[] {
  const lines = [
    `api-load — 3 candidates, leaseDuration ${TIMINGS.leaseDurationSeconds} s, ` +
      `renewDeadline ${TIMINGS.renewDeadlineSeconds} s, retryPeriod ${TIMINGS.retryPeriodSeconds} s, ` +
      `${r.windowSeconds} s window, leadership changes in window: ${r.leadershipChanges}`,
  ];
  for (const id of r.identities) {
    const verbs = Object.entries(id.verbs)
      .map(
        ([verb, v]) =>
          `${verb} ${v.perMinute}/min (${v.count} in window` +
          (v.meanIntervalMs ? `, one every ${v.meanIntervalMs} ms)` : ')'),
      )
      .join(', ');
    const errors = Object.entries(id.nonSuccess)
      .map(([code, n]) => `${code}×${n}`)
      .join(' ');
    lines.push(
      `  ${id.identity.padEnd(6)} ${id.role.padEnd(8)} ${verbs || 'no requests'}` +
        (errors ? ` | non-2xx ${errors}` : ''),
    );
  }
  lines.push(
    `  total ${r.totalPerMinute}/min | expected: leader update ${r.expected.leaderUpdatesPerMinute}, ` +
      `leader get ${r.expected.leaderGetsPerMinute}; follower get ${r.expected.followerGetsPerMinute}`,
  );
  return lines;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
