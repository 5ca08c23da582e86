/**
 * Positive controls of the chaos checker (`test/chaos/invariant-checker.ts`), on the real
 * kube-apiserver with real OS processes: a checker that never fires proves nothing, so here it
 * must report what a wrong implementation really does. The deliberately unsafe candidate
 * (`test/support/unsafe-candidate.ts`: expiry by the remote renewTime against its own wall
 * clock, never stepping down at renewDeadline) leads and works; it is paused (SIGSTOP) past
 * its lease, a nest-leader candidate takes over and works, and the unsafe one is woken: it
 * works on in its old term, and the checker, reading both processes' own work lines, must
 * report the overlapping terms. The same run with a nest-leader candidate in the unsafe one's
 * place must pass: the control is the bug, not the pause. (The lost-slot control, `catchUp:
 * 'skip'` → `slot-lost`, is in `schedule-ledger.test.ts`, on that test's own runs.)
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
