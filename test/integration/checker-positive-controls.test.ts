/**
 * Positive controls of the chaos checker (`test/chaos/invariant-checker.ts`), on the real
 * kube-apiserver with real OS processes: a checker that never fires proves nothing, so here it
 * must report what a wrong implementation really does. The deliberately unsafe candidate
 * (`test/support/unsafe-candidate.ts`: expiry by the remote renewTime against its own wall
 * clock, never stepping down at renewDeadline) leads and works; it is paused (SIGSTOP) past
 * its lease, a nest-leader candidate takes over and works, and the unsafe one is woken: it
 * works on in its old term, and the checker, reading both processes' own work lines, must
 * report the overlapping terms. The same run with a nest-leader candidate in the unsafe one's
 * place must pass: the control is the bug, not the pause. Then the wall-clock bug: an unsafe
 * candidate whose clock runs a minute ahead takes the Lease from a live nest-leader leader,
 * which works on until its next renewal finds the thief (up to one retryPeriod): the checker
 * must report that overlap whenever the leader's work lines show it. (The lost-slot control,
 * `catchUp: 'skip'` → `slot-lost`, is in `schedule-ledger.test.ts`, on that test's own runs.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { candidateRunInput } from '../chaos/candidate-logs.js';
import { checkChaosRun } from '../chaos/invariant-checker.js';
import { CandidateProcess, type CandidateImplementation } from '../support/candidate-process.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { monotonicNowMs } from '../support/monotonic-time.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';

const cluster = getTestCluster();
const FIRST = 'alice';
const SUCCESSOR = 'bob';
const { leaseDurationSeconds } = FAST_TIMINGS;

/**
 * `implementation` leads and works as `alice`; a nest-leader `bob` follows; alice is paused
 * until bob has led and worked a while, then woken. Returns the chaos checker's verdict on
 * both processes' work lines and the units alice did after waking.
 */
async function pausedLeaderRun(implementation: CandidateImplementation) {
  const leaseName = uniqueLeaseName(`control-${implementation}`);
  const target = {
    kubeconfigPath: cluster.identities[FIRST]!.kubeconfigPath,
    leaseName,
    namespace: cluster.namespace,
  };
  const processes: CandidateProcess[] = [];
  try {
    const first = await CandidateProcess.startReady(
      {
        implementation,
        ...target,
        identity: FIRST,
        timings: FAST_TIMINGS,
        releaseOnCancel: false,
        extraArgs: implementation === 'nest-leader' ? ['--work-units', 'isLive'] : [],
      },
      processes,
    );
    const unitsOf = (p: CandidateProcess, sinceMs = -Infinity) =>
      p.eventsWhere((e) => e.event === 'unit-done' && e.monotonicMs > sinceMs);
    await first.waitFor((e) => e.event === 'unit-done' && e.unit === 3, 20_000, 'three units');
    const successor = await CandidateProcess.startReady(
      {
        implementation: 'nest-leader',
        ...target,
        kubeconfigPath: cluster.identities[SUCCESSOR]!.kubeconfigPath,
        identity: SUCCESSOR,
        timings: FAST_TIMINGS,
        releaseOnCancel: false,
        extraArgs: ['--work-units', 'isLive'],
      },
      processes,
    );
    await sleep(1500); // the successor has seen the leader's renewals
    const pausedAt = Date.now();
    first.pause();
    await successor.waitFor(
      (e) => e.event === 'unit-done' && e.unit === 5,
      (leaseDurationSeconds + 10) * 1000,
      'the successor leading and working',
    );
    const resumedAt = Date.now();
    const resumedMs = monotonicNowMs();
    first.resume();
    await sleep(1500); // it acts on waking, then reads the Lease
    const input = candidateRunInput({
      processes: processes.map((p) => ({ identity: p.identity, events: [...p.events] })),
      faults: [{ kind: 'sigstop', target: FIRST, startAt: pausedAt, endAt: resumedAt }],
      boundMs: 60_000,
    });
    return { verdict: checkChaosRun(input), lateUnits: unitsOf(first, resumedMs).length };
  } finally {
    await Promise.all(processes.map((p) => p.dispose()));
  }
}

/**
 * A nest-leader `bob` leads and works; an unsafe `alice` with its clock `skewMs` ahead joins,
 * judges bob's fresh renewTime expired and takes the Lease. Returns the checker's verdict and
 * how many units bob did after alice's term began (by CLOCK_MONOTONIC, the harness's clock).
 */
async function skewedThiefRun(attempt: number, skewMs: number) {
  const leaseName = uniqueLeaseName(`control-skew-${attempt}`);
  const processes: CandidateProcess[] = [];
  const start = (implementation: CandidateImplementation, identity: string, args: string[]) =>
    CandidateProcess.startReady(
      {
        implementation,
        kubeconfigPath: cluster.identities[identity]!.kubeconfigPath,
        leaseName,
        namespace: cluster.namespace,
        identity,
        timings: FAST_TIMINGS,
        releaseOnCancel: false,
        extraArgs: args,
      },
      processes,
    );
  try {
    const leader = await start('nest-leader', SUCCESSOR, ['--work-units', 'isLive']);
    await leader.waitFor((e) => e.event === 'unit-done' && e.unit === 3, 20_000, 'three units');
    const thief = await start('unsafe', FIRST, ['--clock-skew-ms', String(skewMs)]);
    const stolen = await thief.waitFor((e) => e.event === 'started', 10_000, 'the theft');
    await leader.waitFor((e) => e.event === 'stopped', 10_000, 'the leader noticing');
    await sleep(300);
    const input = candidateRunInput({
      processes: processes.map((p) => ({ identity: p.identity, events: [...p.events] })),
      faults: [],
      boundMs: 60_000,
    });
    const unitsAfterTheft = leader.eventsWhere(
      (e) => e.event === 'unit-done' && e.monotonicMs >= stolen.monotonicMs,
    ).length;
    return { verdict: checkChaosRun(input), unitsAfterTheft };
  } finally {
    await Promise.all(processes.map((p) => p.dispose()));
  }
}

describe('positive controls: the chaos checker reports a real overlap in a real run', () => {
  before(async () => {
    await grantLeaseAccess(cluster, FIRST);
    await grantLeaseAccess(cluster, SUCCESSOR);
  });
  after(async () => {
    await revokeLeaseAccess(cluster, FIRST);
    await revokeLeaseAccess(cluster, SUCCESSOR);
  });

  test('an unsafe leader woken after its lease works on beside its successor: overlapping terms reported', async () => {
    const { verdict, lateUnits } = await pausedLeaderRun('unsafe');
    const overlaps = verdict.violations.filter((v) => v.kind === 'overlapping-terms');
    console.log(
      `# unsafe candidate: ${lateUnits} units of work after waking; checker: ${overlaps.map((v) => v.message).join('; ')}`,
    );
    assert.ok(lateUnits > 0, 'the unsafe candidate worked after waking (its bug bit)');
    assert.equal(overlaps.length, 1, `one overlap reported: ${JSON.stringify(verdict.violations)}`);
    assert.match(
      overlaps[0]!.message,
      /^term 0 of alice#1 worked until .*, but term 1 of bob#2 began/,
    );
  });

  test('an unsafe candidate whose clock runs ahead takes a live Lease: the overlap reported whenever the leader worked on', async () => {
    // The leader works every 100 ms and learns of the theft at its next renewal (every 1 s):
    // it works on in about 9 runs in 10. Up to 4 runs until the bug bites; in every run the
    // checker must agree with the work lines.
    let bitten = 0;
    for (let attempt = 1; attempt <= 4 && bitten === 0; attempt++) {
      const { verdict, unitsAfterTheft } = await skewedThiefRun(attempt, 60_000);
      const overlaps = verdict.violations.filter((v) => v.kind === 'overlapping-terms');
      console.log(
        `# skewed thief, run ${attempt}: the leader did ${unitsAfterTheft} units after the theft; checker: ${overlaps.map((v) => v.message).join('; ') || 'nothing'}`,
      );
      if (unitsAfterTheft > 0) {
        bitten += 1;
        assert.equal(overlaps.length, 1, JSON.stringify(verdict.violations));
        assert.match(
          overlaps[0]!.message,
          /^term \d+ of bob#1 worked until .*, but term \d+ of alice#2 began/,
        );
      } else {
        assert.deepEqual(overlaps, [], 'no overlap reported where the work lines show none');
      }
    }
    assert.equal(bitten, 1, 'the leader worked on after the theft in one of 4 runs');
  });

  test('the same run with a nest-leader candidate in its place: nothing reported', async () => {
    const { verdict, lateUnits } = await pausedLeaderRun('nest-leader');
    assert.equal(lateUnits, 0, 'no unit of work after waking');
    assert.deepEqual(
      verdict.violations.map((v) => `[${v.kind}] ${v.message}`),
      [],
      'the checker finds nothing in a correct run',
    );
    assert.equal(verdict.terms.length, 2, 'two terms judged: alice, then bob');
  });
});
