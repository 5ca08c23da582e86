/**
 * The chaos harness's invariant checker on hand-written logs: each rule must fire on the
 * situation it exists for (the defects the harness found on the real API server, replayed
 * as log lines) and stay quiet on a clean handover. No cluster, no processes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DemoEvent } from '@nest-leader/demo/demo-events';
import { shardElectionLogs, shardsInLogs } from './election-logs.js';
import {
  type ChaosInput,
  checkChaosRun,
  collectTerms,
  type FaultRecord,
  type ProbeSample,
  type ProcessLog,
} from './invariant-checker.js';

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

const acquired = (identity: string, token: number, ms: number, live?: boolean): DemoEvent => ({
  event: 'leadership-acquired',
  identity,
  leaseTransitions: token,
  at: at(ms),
  ...(live === undefined ? {} : { live }),
});
const lost = (identity: string, token: number, ms: number): DemoEvent => ({
  event: 'leadership-lost',
  identity,
  leaseTransitions: token,
  at: at(ms),
});
const work = (identity: string, token: number, ms: number, live?: boolean): DemoEvent => ({
  event: 'leader-work',
  task: 'heartbeat',
  identity,
  leaseTransitions: token,
  at: at(ms),
  ...(live === undefined ? {} : { live }),
});
/** Heartbeats every 100 ms in [fromMs, toMs]. */
const beats = (identity: string, token: number, fromMs: number, toMs: number) => {
  const lines: DemoEvent[] = [];
  for (let ms = fromMs; ms <= toMs; ms += 100) lines.push(work(identity, token, ms));
  return lines;
};

function proc(
  instance: string,
  slot: number,
  events: DemoEvent[],
  extra: Partial<ProcessLog> = {},
): ProcessLog {
  return {
    instance,
    identity: instance.split('#')[0]!,
    slot,
    events,
    spawnedAt: T0 - 5000,
    ...extra,
  };
}

function fault(
  round: number,
  kind: FaultRecord['kind'],
  startMs: number,
  endMs: number,
  extra: Partial<FaultRecord> = {},
): FaultRecord {
  return {
    round,
    kind,
    startAt: T0 + startMs,
    endAt: T0 + endMs,
    boundMs: 4200,
    unresponsive: [],
    blind: [],
    ...extra,
  };
}

function input(
  processes: ProcessLog[],
  faults: FaultRecord[] = [],
  probes: ProbeSample[] = [],
): ChaosInput {
  return {
    processes,
    faults,
    probes,
    startupBoundMs: 4200,
    liveness: { failureThreshold: 3, recoveryMs: 6000, lagBoundMs: 3500, staleLeaderMs: 3000 },
    startedAt: T0,
    endedAt: T0 + 60_000,
  };
}

/** a leads term 1 from 0 to 2 s, is SIGKILLed; b takes term 2 at 4.5 s. */
function cleanHandover(): ProcessLog[] {
  return [
    proc('a#1', 0, [acquired('a', 1, 0), ...beats('a', 1, 0, 2000)], {
      exit: { at: T0 + 2050, code: null, signal: 'SIGKILL', expected: true },
    }),
    proc('b#2', 1, [acquired('b', 2, 4500), ...beats('b', 2, 4500, 9000)]),
  ];
}

const kinds = (i: ChaosInput) => checkChaosRun(i).violations.map((v) => v.kind);

describe('chaos invariant checker', () => {
  it('passes a clean crash handover and measures its gap from the last work line', () => {
    const verdict = checkChaosRun(input(cleanHandover(), [fault(1, 'sigkill', 2000, 2050)]));
    assert.deepEqual(verdict.violations, []);
    assert.equal(verdict.terms.length, 2);
    const handover = verdict.transitions[1]!;
    assert.deepEqual(handover.from, { instance: 'a#1', token: 1 });
    assert.deepEqual(handover.to, { instance: 'b#2', token: 2 });
    assert.equal(handover.gapMs, 2500);
    assert.equal(handover.cause, 'sigkill');
  });

  it('flags a gap longer than the bound of the fault it began under', () => {
    const processes = cleanHandover();
    const verdict = checkChaosRun(
      input(processes, [fault(1, 'conflict-storm', 1500, 3000, { boundMs: 2000 })]),
    );
    assert.deepEqual(
      verdict.violations.map((v) => [v.kind, v.round]),
      [['gap-too-long', 1]],
    );
  });

  it('flags a new term under latency-near when the old term still worked as the round began', () => {
    // a works through the round's start until 3.4 s (stepped down under the latency); b
    // takes over at 4.5 s, inside the round.
    const processes = [
      proc('a#1', 0, [acquired('a', 1, 0), ...beats('a', 1, 0, 3400), lost('a', 1, 3450)]),
      proc('b#2', 1, [acquired('b', 2, 4500), ...beats('b', 2, 4500, 9000)]),
    ];
    const verdict = checkChaosRun(input(processes, [fault(1, 'latency-near', 2000, 6000)]));
    assert.deepEqual(
      verdict.violations.map((v) => [v.kind, v.round]),
      [['unexpected-transition', 1]],
    );
  });

  it('work-paused: a kept leader whose work pauses longer than the round allows is reported, one that works on is not', () => {
    const round = fault(1, 'bad-deploy-crashloop', 2000, 11_000, { workPauseBoundMs: 5000 });
    // a leads throughout; its work stops from 3 s to 9.5 s (6.5 s) while the bad pods crash.
    const paused = [
      proc('a#1', 0, [
        acquired('a', 1, 0),
        ...beats('a', 1, 0, 3000),
        ...beats('a', 1, 9500, 12_000),
      ]),
    ];
    const verdict = checkChaosRun(input(paused, [round]));
    assert.deepEqual(
      verdict.violations.map((v) => [v.kind, v.round]),
      [['work-paused', 1]],
    );
    assert.match(verdict.violations[0]!.message, /no leader work for 6500 ms/);
    // From the last line before the round: a pause that began before it counts whole.
    const early = [
      proc('a#1', 0, [
        acquired('a', 1, 0),
        ...beats('a', 1, 0, 1000),
        ...beats('a', 1, 6500, 12_000),
      ]),
    ];
    assert.deepEqual(kinds(input(early, [round])), ['work-paused']);
    // Working on (or a round nobody bounds): nothing.
    const working = [proc('a#1', 0, [acquired('a', 1, 0), ...beats('a', 1, 0, 12_000)])];
    assert.deepEqual(kinds(input(working, [round])), []);
    assert.deepEqual(kinds(input(paused, [fault(1, 'bad-deploy-crashloop', 2000, 11_000)])), []);
  });

  it('does not blame latency-near for a failover an earlier fault began (second election)', () => {
    // long run, round 387: the shard-a holder was SIGKILLed in round 386 (at 2 s); the next
    // round (latency-near on another leader) began at 3.5 s, before shard-a's takeover at 4.5 s.
    const verdict = checkChaosRun(
      input(cleanHandover(), [
        fault(1, 'sigkill', 2000, 2050),
        fault(2, 'latency-near', 3500, 6000, { boundMs: 2700 }),
      ]),
    );
    assert.deepEqual(verdict.violations, []);
    assert.equal(verdict.transitions[1]!.gapMs, 2500);
  });

  it('flags an old term working after the next term was acquired (a paused leader waking up)', () => {
    const processes = [
      proc('a#1', 0, [
        acquired('a', 1, 0),
        ...beats('a', 1, 0, 1000),
        work('a', 1, 4700),
        lost('a', 1, 4701),
      ]),
      proc('b#2', 1, [acquired('b', 2, 4500), ...beats('b', 2, 4500, 6000)]),
    ];
    const verdict = checkChaosRun(input(processes, [fault(1, 'sigstop', 1000, 4600)]));
    assert.deepEqual(
      verdict.violations.map((v) => v.kind),
      ['overlapping-terms'],
    );
    assert.match(verdict.violations[0]!.message, /200 ms of overlap/);
  });

  it('flags work the elector did not back (live: false) and work after the logged end', () => {
    const processes = [
      proc('a#1', 0, [
        acquired('a', 1, 0),
        work('a', 1, 100, true),
        work('a', 1, 200, false),
        lost('a', 1, 300),
        work('a', 1, 400),
      ]),
    ];
    assert.deepEqual(kinds(input(processes)), ['work-after-term-ended', 'work-after-term-ended']);
  });

  it('an acquisition written after its term ended (live: false) starts no span; written live, it overlaps', () => {
    // CI's seed 1151739778, shard 4: a member SIGSTOPped between the library's grant check and
    // its `started` line wrote the line for token 25 on waking, inside the next owner's token 26.
    const late = (live: boolean | undefined) => [
      proc('b#1', 0, [acquired('b', 26, 0), ...beats('b', 26, 0, 3000)]),
      proc('a#2', 1, [acquired('a', 25, 2000, live), lost('a', 25, 2001)]),
    ];
    const verdict = checkChaosRun(input(late(false)));
    assert.deepEqual(verdict.violations, []);
    assert.equal(verdict.lateAnnouncements, 1);
    for (const live of [true, undefined]) {
      const judged = checkChaosRun(input(late(live)));
      assert.deepEqual(
        judged.violations.map((v) => v.kind),
        ['overlapping-terms', 'token-not-increasing'],
        `live: ${live}`,
      );
      assert.equal(judged.lateAnnouncements, 0);
    }
  });

  it('keeps two terms of one process with the same token apart and flags the repeated token', () => {
    // The Lease deleted under a live leader, recreated with leaseTransitions 0 (issue 8).
    const processes = [
      proc('a#1', 0, [
        acquired('a', 0, 0),
        ...beats('a', 0, 0, 1000),
        lost('a', 0, 1100),
        acquired('a', 0, 3000),
        ...beats('a', 0, 3000, 4000),
      ]),
    ];
    const verdict = checkChaosRun(input(processes, [fault(1, 'lease-deleted', 1000, 1010)]));
    assert.equal(verdict.terms.length, 2);
    assert.deepEqual(
      verdict.violations.map((v) => v.kind),
      ['token-not-increasing'],
    );
  });

  it('flags two processes of one identity leading at once (a namesake taking the Lease)', () => {
    const processes = [
      proc('a#1', 0, [acquired('a', 3, 0), ...beats('a', 3, 0, 2000), lost('a', 3, 2001)]),
      proc('a#7', 5, [acquired('a', 4, 1800), ...beats('a', 4, 1800, 3000)]),
    ];
    assert.deepEqual(kinds(input(processes)), ['overlapping-terms']);
  });

  it('groups terms by process and token, ordered by start', () => {
    const terms = collectTerms(cleanHandover());
    assert.deepEqual(
      terms.map((t) => [t.instance, t.token, t.start - T0, t.end - T0, t.workLines]),
      [
        ['a#1', 1, 0, 2000, 21],
        ['b#2', 2, 4500, 9000, 46],
      ],
    );
  });

  it('flags a replica that exited on its own, not one the harness killed', () => {
    const processes = cleanHandover();
    processes.push(
      proc('c#3', 2, [], { exit: { at: T0 + 3000, code: 1, signal: null, expected: false } }),
    );
    assert.deepEqual(kinds(input(processes)), ['crashed']);
  });

  it('flags liveness failing three probes in a row unless a fault on that replica excuses it', () => {
    const processes = cleanHandover();
    const probes: ProbeSample[] = [1000, 2000, 3000, 4000].map((ms) => ({
      instance: 'b#2',
      at: T0 + ms,
      healthz: ms === 1000 ? 200 : 503,
    }));
    assert.deepEqual(kinds(input(processes, [], probes)), ['liveness-failing']);
    const excusing = fault(1, 'sigstop', 1500, 2500, { unresponsive: ['b#2'] });
    assert.deepEqual(kinds(input(processes, [excusing], probes)), []);
  });

  it('flags a replica that answers healthy while claiming a term long superseded', () => {
    const processes = cleanHandover();
    const probe = (ms: number): ProbeSample => ({
      instance: 'a#1',
      at: T0 + ms,
      healthz: 200,
      leader: { isLeader: true, leaseTransitions: 1 },
    });
    const stale = { ...processes[0]!, exit: undefined };
    assert.deepEqual(kinds(input([stale, processes[1]!], [], [probe(5000)])), []);
    assert.deepEqual(kinds(input([stale, processes[1]!], [], [probe(8000), probe(9000)])), [
      'healthy-while-wedged',
    ]);
  });

  it('flags a healthy follower that never sees the new term, unless its view was cut off', () => {
    const processes = [...cleanHandover(), proc('c#3', 2, [])];
    const probes: ProbeSample[] = [
      {
        instance: 'c#3',
        at: T0 + 5000,
        healthz: 200,
        leader: { isLeader: false, leaseTransitions: 1 },
      },
      {
        instance: 'c#3',
        at: T0 + 9000,
        healthz: 200,
        leader: { isLeader: false, leaseTransitions: 1 },
      },
    ];
    assert.deepEqual(kinds(input(processes, [], probes)), ['healthy-while-wedged']);
    const cutOff = fault(1, 'partition-blackhole', 4000, 6000, { blind: ['c#3'] });
    assert.deepEqual(kinds(input(processes, [cutOff], probes)), []);
  });

  it('judges the view of a follower only once its elector has run for the lag bound (a slow boot is not a wedge)', () => {
    // c is spawned at -5 s, but its app (and elector) starts only at 8 s: at 8.5 s it has not
    // read the Lease yet. At 8 s + lag bound (3.5 s) + 0.5 s it must have seen term 2.
    const started: DemoEvent = {
      event: 'replica-started',
      identity: 'c',
      pid: 1,
      port: 1,
      leaseName: 'l',
      lock: 'kubernetes',
      shards: 16,
      at: at(8000),
    };
    const processes = [...cleanHandover(), proc('c#3', 2, [started])];
    const probe = (ms: number): ProbeSample => ({
      instance: 'c#3',
      at: T0 + ms,
      healthz: 200,
      leader: { isLeader: false, leaseTransitions: null },
    });
    assert.deepEqual(kinds(input(processes, [], [probe(8500)])), []);
    assert.deepEqual(kinds(input(processes, [], [probe(12_000)])), ['healthy-while-wedged']);
  });

  it('accepts a follower whose answer already shows a term begun after the probe was sent', () => {
    const processes = [
      ...cleanHandover(),
      proc('d#4', 3, [acquired('d', 3, 9050), ...beats('d', 3, 9050, 9500)]),
      proc('c#3', 2, []),
    ];
    processes[1] = proc('b#2', 1, [acquired('b', 2, 4500), ...beats('b', 2, 4500, 9000)]);
    const probes: ProbeSample[] = [
      {
        instance: 'c#3',
        at: T0 + 9000,
        healthz: 200,
        leader: { isLeader: false, leaseTransitions: 3 },
      },
    ];
    assert.deepEqual(kinds(input(processes, [], probes)), []);
  });

  it('judges one shard of a sharded election from its own events, a gap by the rounds it overlaps', () => {
    const shard = (
      identity: string,
      state: 'started' | 'stopped',
      token: number,
      ms: number,
      shardNo = 3,
    ): DemoEvent => ({
      event: 'shard-ownership',
      election: 'orders',
      state,
      shard: shardNo,
      token,
      memberEpoch: 0,
      identity,
      at: at(ms),
    });
    const shardWork = (identity: string, token: number, ms: number, shardNo = 3): DemoEvent => ({
      event: 'shard-work',
      election: 'orders',
      shard: shardNo,
      token,
      memberEpoch: 0,
      identity,
      at: at(ms),
    });
    const logs = [
      proc('a#1', 0, [
        shard('a', 'started', 1, 0),
        shardWork('a', 1, 1000),
        shardWork('a', 1, 2000),
        // Another shard of the same election, at once: not this shard's overlap.
        shard('a', 'started', 1, 0, 4),
        shardWork('a', 1, 6200, 4),
      ]),
      proc('b#2', 1, [
        acquired('b', 9, 0),
        shard('b', 'started', 2, 6000),
        shardWork('b', 2, 6500),
      ]),
    ];
    assert.deepEqual(shardsInLogs(logs, 'orders'), [3, 4]);
    // The default election's events and the other shard's are ignored.
    const processes = shardElectionLogs(logs, 'orders', 3);
    // The gap (2 s → 6 s) begins in a round bounded at 4.5 s and ends in one bounded at 2 s.
    const faults = [
      fault(1, 'apiserver-down', 1500, 3000, { boundMs: 4500 }),
      fault(2, 'sigterm', 5000, 5100, { boundMs: 2000 }),
    ];
    const overlapping = checkChaosRun(input(processes, faults), {
      attribution: 'overlapping-rounds',
    });
    assert.deepEqual(overlapping.violations, []);
    assert.equal(overlapping.transitions[1]!.cause, 'apiserver-down');
    const byNewTerm = checkChaosRun(input(processes, faults));
    assert.deepEqual(
      byNewTerm.violations.map((v) => v.kind),
      ['gap-too-long'],
    );
  });
});

describe('rule slot-lost: the scheduled job under catch-up all', () => {
  /** A `dispatch-jobs` line of slot `slotMs` that began at `atMs`. */
  const dispatch = (identity: string, token: number, slotMs: number, atMs = slotMs + 5) =>
    ({
      event: 'leader-work',
      task: 'dispatch-jobs',
      identity,
      leaseTransitions: token,
      at: at(atMs),
      slot: at(slotMs),
    }) satisfies DemoEvent;
  const JOB = { task: 'dispatch-jobs', periodMs: 2000, horizonMs: 60_000 } as const;

  /** a runs slots 0, 2 s; is SIGKILLed at 3 s; b takes over at 6.5 s and runs 4 s and 6 s late (unless `drop`). */
  function failover(drop: number[] = [], moreOfB: DemoEvent[] = []): ProcessLog[] {
    const late = [4000, 6000].filter((ms) => !drop.includes(ms));
    return [
      proc('a#1', 0, [acquired('a', 1, 0), dispatch('a', 1, 0), dispatch('a', 1, 2000)]),
      proc('b#2', 1, [
        acquired('b', 2, 6500),
        ...late.map((slot, i) => dispatch('b', 2, slot, 6510 + i * 200)),
        dispatch('b', 2, 8000),
        ...moreOfB,
      ]),
    ];
  }

  it('stays quiet when the new leader ran the missed slots late, and counts them', () => {
    const verdict = checkChaosRun({
      ...input(failover(), [fault(1, 'sigkill', 3000, 3010)]),
      scheduledJob: JOB,
    });
    assert.deepEqual(
      verdict.violations.filter((v) => v.kind === 'slot-lost'),
      [],
    );
    assert.deepEqual(verdict.slots, {
      due: 5,
      onTime: 4,
      late: 1,
      begunTwice: 0,
      redone: 0,
      excused: 0,
      lost: 0,
    });
  });

  it('fires on a slot that never began although a term began within the horizon', () => {
    const verdict = checkChaosRun({
      ...input(failover([4000]), [fault(1, 'sigkill', 3000, 3010)]),
      scheduledJob: JOB,
    });
    const lostSlots = verdict.violations.filter((v) => v.kind === 'slot-lost');
    assert.equal(lostSlots.length, 1);
    assert.match(lostSlots[0]!.message, /2026-11-22T12:00:04\.000Z of dispatch-jobs never began/);
    assert.match(lostSlots[0]!.message, /term 2 of b#2 began 2500 ms after it/);
  });

  it('fires on a slot skipped by the leader live at it, however late the next term began', () => {
    // a leads from 0 to 9 s and skips slot 4 s; b begins at 80 s and catches up the slots of
    // its 10 s horizon. The old rule excused slot 4 s by that next term's late start.
    const processes = [
      proc('a#1', 0, [
        acquired('a', 1, 0),
        ...beats('a', 1, 0, 9000),
        ...[0, 2000, 6000, 8000].map((ms) => dispatch('a', 1, ms)),
      ]),
      proc('b#2', 1, [
        acquired('b', 2, 80_000),
        ...[70_000, 72_000, 74_000, 76_000, 78_000, 80_000].map((slot, i) =>
          dispatch('b', 2, slot, 80_010 + i * 10),
        ),
      ]),
    ];
    const verdict = checkChaosRun({
      ...input(processes),
      scheduledJob: { ...JOB, horizonMs: 10_000 },
    });
    const lostSlots = verdict.violations.filter((v) => v.kind === 'slot-lost');
    assert.deepEqual(
      lostSlots.map((v) => v.message.replace(/ \(.*/, '')),
      ['slot 2026-11-22T12:00:04.000Z of dispatch-jobs never began'],
    );
    assert.match(lostSlots[0]!.message, /term 1 of a#1 was live at it/);
    assert.equal(verdict.slots?.excused, 30, 'slots 10 s to 68 s: no leader within the horizon');
  });

  it('excuses the slots from the Lease deletion to the next term (the ledger went with it)', () => {
    const verdict = checkChaosRun({
      ...input(failover([4000, 6000]), [
        fault(1, 'lease-deleted', 2500, 3010, { measurements: { leaseDeletedAt: T0 + 3000 } }),
      ]),
      scheduledJob: JOB,
    });
    assert.deepEqual(
      verdict.violations.filter((v) => v.kind === 'slot-lost'),
      [],
    );
    assert.equal(verdict.slots?.excused, 2);
  });

  it('does not excuse a slot of a lease-deleted round that a live leader skipped before the deletion', () => {
    const processes = [
      proc('a#1', 0, [
        acquired('a', 1, 0),
        ...beats('a', 1, 0, 5000),
        ...[0, 4000].map((ms) => dispatch('a', 1, ms)),
      ]),
      proc('b#2', 1, [acquired('b', 2, 8500), dispatch('b', 2, 10_000)]),
    ];
    const verdict = checkChaosRun({
      ...input(processes, [
        fault(1, 'lease-deleted', 1000, 5010, { measurements: { leaseDeletedAt: T0 + 5000 } }),
      ]),
      scheduledJob: JOB,
    });
    assert.deepEqual(
      verdict.violations
        .filter((v) => v.kind === 'slot-lost')
        .map((v) => v.message.replace(/ \(.*/, '')),
      ['slot 2026-11-22T12:00:02.000Z of dispatch-jobs never began'],
    );
    assert.equal(verdict.slots?.excused, 2, 'slots 6 s and 8 s: the Lease was gone');
  });

  it('does not excuse the slots of a foreign-writer round: the writer keeps the ledger', () => {
    const verdict = checkChaosRun({
      ...input(failover([4000]), [fault(1, 'foreign-writer', 3000, 3010)]),
      scheduledJob: JOB,
    });
    assert.equal(verdict.slots?.lost, 1);
  });

  it('excuses a slot when no leader was live from it to the end of its horizon', () => {
    const verdict = checkChaosRun({
      ...input(failover([4000]), [fault(1, 'sigkill', 3000, 3010)]),
      scheduledJob: { ...JOB, horizonMs: 2000 },
    });
    assert.equal(verdict.slots?.lost, 0);
    assert.equal(verdict.slots?.excused, 1);
  });

  it('flags a run whose line carries no slot', () => {
    const { slot: _slot, ...unlabelled } = dispatch('b', 2, 10_000);
    const processes = failover([], [unlabelled]);
    const verdict = checkChaosRun({
      ...input(processes, [fault(1, 'sigkill', 3000, 3010)]),
      scheduledJob: JOB,
    });
    assert.deepEqual(
      verdict.violations.filter((v) => v.kind.includes('slot')).map((v) => [v.kind, v.message]),
      [
        [
          'run-without-slot',
          'b#2 ran dispatch-jobs in term 2 at 2026-11-22T12:00:10.005Z with no slot on its line',
        ],
      ],
    );
  });

  it('counts a slot begun again by a later term as redone', () => {
    const processes = failover([], [dispatch('b', 2, 2000, 6520)]);
    const verdict = checkChaosRun({
      ...input(processes, [fault(1, 'sigkill', 3000, 3010)]),
      scheduledJob: JOB,
    });
    assert.equal(verdict.slots?.begunTwice, 1);
    assert.equal(verdict.slots?.redone, 1);
  });
});
