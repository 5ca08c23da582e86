/**
 * The schedule ledger end to end: a fleet of real Nest application processes on one real Lease,
 * each with a leader-only `@Cron('* * * * * *')` job that records every run (slot, token,
 * begun, completed) beside its effects (keyed by `currentSlot()`, fenced by its token) in one
 * SQLite file. The leader is SIGKILLed, SIGTERMed and SIGSTOPped before, during and after its
 * runs. What is asserted is the library's docs/schedule-ledger.md guarantee, from the runs themselves: under
 * `catchUp: 'all'` every slot begins at least once, and a slot that runs twice does so only in
 * the cases the README names (completed less than one retryPeriodSeconds before its leader
 * crashed, begun and not completed, or completed while an earlier slot was still unsettled —
 * the completion watermark moves in order); the recipe's fence refuses the SIGSTOPped
 * leader's late write. Under `'skip'` (the behaviour before the ledger) the slots of a
 * failover are lost — and the chaos checker's `slot-lost` rule, fed these same runs, must
 * report them (its positive control), while it reports none under `'all'`.
 *
 * Short mode (`pnpm test`): 6 failovers per policy (before, during and after a run twice each).
 * Long mode: `SCHEDULE_LEDGER_FAILOVERS=100` (see the library's docs/schedule-ledger.md for figures).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultHorizonMs } from 'nest-leader';
import { candidateRunInput } from '../chaos/candidate-logs.js';
import type { FaultKind } from '../chaos/fault-kinds.js';
import { checkChaosRun } from '../chaos/invariant-checker.js';
import { getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import {
  runScheduleFailovers,
  type ScheduleFailoverFigures,
} from '../support/schedule-failovers.js';

const cluster = getTestCluster();
const USER = 'carol';
const FAILOVERS = Number(process.env.SCHEDULE_LEDGER_FAILOVERS ?? 6);

function describeFigures(f: ScheduleFailoverFigures): string {
  const redos = (kind: string) => f.redos.filter((r) => r.kind === kind).length;
  return (
    `catchUp '${f.policy}': ${f.failovers} failovers (SIGKILL ${f.bySignal.SIGKILL}, SIGTERM ${f.bySignal.SIGTERM}, SIGSTOP ${f.bySignal.SIGSTOP}; ` +
    `before ${f.byMoment.before}, during ${f.byMoment.during}, after ${f.byMoment.after} a run; ` +
    `median ${f.failoverMs.median} ms, max ${f.failoverMs.max} ms), ${f.slotsDue} slots due: ` +
    `${f.ranOnTime} on time, ${f.caughtUp} caught up, ${f.lost} lost, ${f.ranTwice} run twice ` +
    `(redos: ${redos('completed-before-crash')} completed < retryPeriod before a crash, ` +
    `${redos('begun-not-completed')} begun and not completed, ` +
    `${redos('completed-past-an-unsettled-slot')} completed past an unsettled earlier slot, ` +
    `${redos('unexplained')} unexplained), ` +
    `${f.withoutEffect} without effect, ${f.effectsTwice} effects written twice, ` +
    `${f.refusedByFence} refused by the fence, ${f.staleAccepted} stale writes accepted`
  );
}

/** The chaos checker's verdict on the same runs (the job's runs as `dispatch-jobs` lines). */
function chaosVerdict(f: ScheduleFailoverFigures) {
  const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;
  return checkChaosRun(
    candidateRunInput({
      processes: f.processes,
      faults: f.faults.map((fault) => ({
        kind: fault.signal.toLowerCase() as FaultKind,
        target: fault.leader,
        startAt: fault.signalledAt,
        endAt: fault.successorStartedAt,
      })),
      scheduledJob: {
        task: 'dispatch-jobs',
        periodMs: 1000,
        horizonMs: defaultHorizonMs(leaseDurationSeconds, retryPeriodSeconds),
      },
      boundMs: 60_000,
    }),
  );
}

describe('schedule ledger across failovers (real Nest processes, real kube-apiserver)', () => {
  before(() => grantLeaseAccess(cluster, USER));
  after(() => revokeLeaseAccess(cluster, USER));

  const run = (policy: 'all' | 'skip') =>
    runScheduleFailovers({
      policy,
      failovers: FAILOVERS,
      kubeconfigPath: cluster.identities[USER]!.kubeconfigPath,
      namespace: cluster.namespace,
      leaseName: uniqueLeaseName(`slots-${policy}`),
      timings: FAST_TIMINGS,
      log: (line) => console.log(`# ${line}`),
    });

  test("catchUp 'all': every slot begins at least once, redone only as the README says, the fence refuses the woken leader", async () => {
    const figures = await run('all');
    const summary = describeFigures(figures);
    console.log(`# ${summary}`);
    for (const moment of ['before', 'during', 'after'] as const) {
      assert.ok(figures.byMoment[moment] > 0, `a failover ${moment} a run: ${summary}`);
    }
    assert.ok(figures.slotsDue >= FAILOVERS * 3, `a run long enough to judge: ${summary}`);
    assert.deepEqual(figures.lostSlots, [], `every slot began at least once: ${summary}`);
    assert.deepEqual(
      figures.redos
        .filter((r) => r.kind === 'unexplained')
        .map((r) => ({
          slot: r.slot,
          earlier: r.earlier,
          later: r.later,
          termEnded: r.termEndedMonoMs,
        })),
      [],
      `every slot run twice is one of the README's redo cases: ${summary}`,
    );
    assert.equal(figures.withoutEffect, 0, `every slot has its effect: ${summary}`);
    assert.equal(figures.effectsTwice, 0, 'keyed by slot and fenced: no effect twice');
    assert.ok(
      figures.refusedByFence > 0,
      `the woken SIGSTOPped leader's write was refused: ${summary}`,
    );
    assert.equal(
      figures.staleAccepted,
      0,
      `no write under an older token after a newer one: ${summary}`,
    );
    assert.ok(figures.caughtUp > 0, `failovers left slots to catch up: ${summary}`);

    const verdict = chaosVerdict(figures);
    assert.ok((verdict.slots?.due ?? 0) > 0, 'the chaos checker saw the slots');
    assert.deepEqual(
      verdict.violations
        .filter((v) => ['slot-lost', 'run-without-slot', 'overlapping-terms'].includes(v.kind))
        .map((v) => `[${v.kind}] ${v.message}`),
      [],
      'the chaos checker finds no lost slot and no overlap in the same runs',
    );
  });

  test("catchUp 'skip' (the behaviour before the ledger): the slots of a failover are lost, and the chaos checker reports them", async () => {
    const figures = await run('skip');
    const summary = describeFigures(figures);
    console.log(`# ${summary}`);
    assert.ok(figures.lost > 0, `slots are lost without catch-up: ${summary}`);
    assert.equal(figures.caughtUp, 0, 'nothing runs late under skip');
    assert.equal(figures.effectsTwice, 0, 'keyed by slot and fenced: no effect twice');
    assert.equal(
      figures.staleAccepted,
      0,
      `no write under an older token after a newer one: ${summary}`,
    );

    // Positive control of the chaos checker's slot-lost rule: the same lost slots, reported.
    const verdict = chaosVerdict(figures);
    const reported = verdict.violations.filter((v) => v.kind === 'slot-lost');
    console.log(
      `# chaos checker on the skip run: ${reported.length} slot-lost violations, slots ${JSON.stringify(verdict.slots)}`,
    );
    assert.equal(reported.length, figures.lost, `the checker reports every lost slot: ${summary}`);
    assert.deepEqual(
      reported.map((v) => new Date(v.at).toISOString()).slice(0, 20),
      figures.lostSlots,
    );
  });
});
