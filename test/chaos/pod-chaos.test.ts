/**
 * The pure parts of `pnpm chaos --cluster`: the pods' log lines as the checker's processes, and
 * the bound table against the manifests' timings.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodLogLine } from '../support/pod-log-collector.js';
import { checkChaosRun } from './invariant-checker.js';
import {
  apiStallMs,
  manifestTimings,
  POD_FAULT_SPECS,
  POD_MEASUREMENTS,
  podStartupBoundMs,
} from './pod-fault-kinds.js';
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

  it('one container run read under two restart counts (a stale status) is one process, its longer reading kept', () => {
    const started = line('demo-a', 1, { event: 'replica-started', identity: 'demo-a', at: at(0) });
    const acquired = line('demo-a', 1, {
      event: 'leadership-acquired',
      identity: 'demo-a',
      leaseTransitions: 3,
      at: at(1),
    });
    const worked = line('demo-a', 1, work('demo-a', 3, 2));
    const asZero = (l: PodLogLine): PodLogLine => ({ ...l, restartCount: 0 });
    const logs = podProcessLogs([
      asZero(started),
      asZero(acquired),
      started,
      acquired,
      worked,
      // a later run of the same pod begins differently: its own process
      line('demo-a', 2, { event: 'replica-started', identity: 'demo-a', at: at(9) }),
    ]);
    assert.deepEqual(
      logs.map((p) => [p.instance, p.events.map((e) => e.event)]),
      [
        ['demo-a#0', ['replica-started', 'leadership-acquired', 'leader-work']],
        ['demo-a#2', ['replica-started']],
      ],
    );
    // two readings that part ways are two runs, both judged
    const parted = podProcessLogs([asZero(started), asZero(worked), started, acquired]);
    assert.equal(parted.length, 2);
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
    assert.equal(
      POD_FAULT_SPECS['rollout-stale-entry'].boundMs(t),
      POD_FAULT_SPECS['pod-delete'].boundMs(t),
    );
  });

  it('the API server stall outlasts renewDeadline but not the lease; its bound grows with the measured stall', () => {
    const stall = apiStallMs(t);
    assert.ok(stall > t.renewDeadlineMs && stall < t.leaseDurationMs, `${stall} ms`);
    const spec = POD_FAULT_SPECS['apiserver-stall'];
    // Within the lease the followers' expiry decides (L + J·R = 17.4 s, then J·R − D + W + S;
    // J = 1.2).
    assert.equal(Math.round(spec.boundMs(t)), 15_000 + 2_400 + 2_400 - 10_000 + 2_000 + 3_000);
    const longer = spec.boundMs(t, { [POD_MEASUREMENTS.stallMs]: 30_000 });
    assert.equal(Math.round(longer), 30_000 + 2_000 + 2_400 - 10_000 + 2_000 + 3_000);
  });

  it('a rollout during a failover, and a cluster restart, are bounded by a crash counted from the first pod up', () => {
    for (const kind of ['rollout-during-failover', 'cluster-restart'] as const) {
      const spec = POD_FAULT_SPECS[kind];
      const measured = (ms: number) => spec.boundMs(t, { [POD_MEASUREMENTS.newPodUpMs]: ms });
      assert.equal(measured(8_000) - measured(0), 8_000, kind);
      assert.ok(measured(0) > POD_FAULT_SPECS['container-kill'].boundMs(t), kind);
    }
    // A cluster restart counts from the later of the first container up and the API server
    // ready again (nobody reads the Lease before it answers).
    const restart = POD_FAULT_SPECS['cluster-restart'];
    const both = (upMs: number, apiMs: number) =>
      restart.boundMs(t, {
        [POD_MEASUREMENTS.newPodUpMs]: upMs,
        [POD_MEASUREMENTS.apiReadyMs]: apiMs,
      });
    assert.equal(both(2_000, 12_000) - both(2_000, 0), 10_000);
    assert.equal(both(12_000, 2_000), both(2_000, 12_000));
  });

  it('a bad deploy keeps the leader: bounded by one handoff, never ending the term', () => {
    for (const kind of [
      'bad-deploy-unpullable',
      'bad-deploy-crashloop',
      'bad-deploy-unhealthy',
    ] as const) {
      assert.equal(POD_FAULT_SPECS[kind].endsTerm, false, kind);
      assert.equal(POD_FAULT_SPECS[kind].boundMs(t), POD_FAULT_SPECS['pod-delete'].boundMs(t));
    }
  });

  it('a transition while the kubelet or containerd restarts, or during a bad deploy, is reported as unexpected', () => {
    for (const kind of ['kubelet-restart', 'containerd-restart', 'bad-deploy-crashloop'] as const) {
      const processes = podProcessLogs([
        line('demo-a', 0, {
          event: 'leadership-acquired',
          identity: 'demo-a',
          leaseTransitions: 0,
          at: at(0),
        }),
        line('demo-a', 0, work('demo-a', 0, 2)),
        line('demo-a', 0, work('demo-a', 0, 4)),
        line('demo-b', 0, {
          event: 'leadership-acquired',
          identity: 'demo-b',
          leaseTransitions: 1,
          at: at(20),
        }),
      ]);
      const verdict = checkChaosRun({
        processes,
        faults: [
          {
            round: 1,
            kind,
            startAt: Date.parse(at(3)),
            endAt: Date.parse(at(25)),
            boundMs: POD_FAULT_SPECS[kind].boundMs(t),
            unresponsive: [],
            blind: [],
          },
        ],
        probes: [],
        startupBoundMs: 60_000,
        liveness: { failureThreshold: 3, recoveryMs: 0, lagBoundMs: 1e12, staleLeaderMs: 1e12 },
        startedAt: Date.parse(at(0)),
        endedAt: Date.parse(at(30)),
      });
      assert.deepEqual(
        verdict.violations.map((v) => v.kind),
        // The bad deploy's bound is a handoff's: its 16 s gap is over that too.
        kind === 'bad-deploy-crashloop'
          ? ['gap-too-long', 'unexpected-transition']
          : ['unexpected-transition'],
        kind,
      );
    }
  });
});
