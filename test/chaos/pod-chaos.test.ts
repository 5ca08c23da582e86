/**
 * The pure parts of `pnpm chaos --cluster`: the pods' log lines as the checker's processes, and
 * the bound table against the manifests' timings.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodLogLine } from '../support/pod-log-collector.js';
import { checkChaosRun } from './invariant-checker.js';
import { manifestTimings, POD_FAULT_SPECS, podStartupBoundMs } from './pod-fault-kinds.js';
import { podProcessLogs } from './pod-logs.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 22, 0, s)).toISOString();
const line = (pod: string, restartCount: number, event: object): PodLogLine => ({
  pod,
  restartCount,
  line: JSON.stringify(event),
});
const work = (identity: string, token: number, s: number) => ({
  event: 'leader-work',
  task: 'heartbeat',
  identity,
  leaseTransitions: token,
  at: at(s),
});

describe('pod chaos: the pods own log lines as the checker sees them', () => {
  it('one process per container run, one row per pod; lines that are not events are skipped', () => {
    const logs = podProcessLogs([
      line('demo-a', 0, { event: 'replica-started', identity: 'demo-a', at: at(0) }),
      { pod: 'demo-a', restartCount: 0, line: 'Nest application started' },
      { pod: 'demo-a', restartCount: 0, line: '{"event":"leader-wo' },
      line('demo-b', 0, { event: 'replica-started', identity: 'demo-b', at: at(1) }),
      line('demo-a', 1, { event: 'replica-started', identity: 'demo-a', at: at(30) }),
    ]);
    assert.deepEqual(
      logs.map((p) => [p.instance, p.identity, p.slot, p.events.length, p.spawnedAt]),
      [
        ['demo-a#0', 'demo-a', 0, 1, Date.parse(at(0))],
        ['demo-b#0', 'demo-b', 1, 1, Date.parse(at(1))],
        ['demo-a#1', 'demo-a', 0, 1, Date.parse(at(30))],
      ],
    );
  });

  it('a pod that works on after the next pod acquired is reported as overlapping terms', () => {
    const processes = podProcessLogs([
      line('demo-a', 0, {
        event: 'leadership-acquired',
        identity: 'demo-a',
        leaseTransitions: 0,
        at: at(0),
      }),
      line('demo-a', 0, work('demo-a', 0, 1)),
      line('demo-a', 0, work('demo-a', 0, 5)),
      line('demo-b', 0, {
        event: 'leadership-acquired',
        identity: 'demo-b',
        leaseTransitions: 1,
        at: at(4),
      }),
      line('demo-b', 0, work('demo-b', 1, 6)),
    ]);
    const verdict = checkChaosRun({
      processes,
      faults: [],
      probes: [],
      startupBoundMs: 60_000,
      liveness: { failureThreshold: 3, recoveryMs: 0, lagBoundMs: 1e12, staleLeaderMs: 1e12 },
      startedAt: Date.parse(at(0)),
      endedAt: Date.parse(at(7)),
    });
    assert.deepEqual(
      verdict.violations.map((v) => v.kind),
      ['overlapping-terms'],
    );
  });
});

describe('pod chaos: the bound table, from apps/demo/deploy', () => {
  const t = manifestTimings();

  it('reads the shipped timings (the library defaults: 15 s, 10 s, 2 s)', () => {
    assert.deepEqual(
      [t.leaseDurationMs, t.renewDeadlineMs, t.retryPeriodMs],
      [15_000, 10_000, 2_000],
    );
  });

  it('a graceful deletion, an eviction and a deletion beside a ghost are bounded by one handoff, below leaseDuration; a crash by the lease', () => {
    for (const kind of ['pod-delete', 'pod-evict', 'ghost-then-delete'] as const) {
      assert.ok(
        POD_FAULT_SPECS[kind].boundMs(t) < t.leaseDurationMs,
        `${kind}: ${POD_FAULT_SPECS[kind].boundMs(t)} ms`,
      );
    }
    assert.ok(POD_FAULT_SPECS['container-kill'].boundMs(t) > t.leaseDurationMs);
    assert.equal(podStartupBoundMs(t), POD_FAULT_SPECS['container-kill'].boundMs(t));
  });
});
