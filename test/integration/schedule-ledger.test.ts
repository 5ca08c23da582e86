/**
 * The schedule ledger end to end: a fleet of real Nest application processes on one real Lease,
 * each with a leader-only `@Cron('* * * * * *')` job whose runs write to one SQLite record of
 * side effects (keyed by `currentSlot()`, fenced by its token). The leader is SIGKILLed,
 * SIGTERMed and SIGSTOPped before, during and after its runs. With `catchUp: 'all'` no slot is
 * lost and no effect is written twice; with `'skip'` (the behaviour before the ledger) the slots
 * of each failover are lost, which this test shows.
 *
 * Short mode (`pnpm test`): 6 failovers per policy. Long mode: `SCHEDULE_LEDGER_FAILOVERS=100`
 * (see the README's "Schedule ledger" for its figures).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
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
  return (
    `catchUp '${f.policy}': ${f.failovers} failovers (SIGKILL ${f.bySignal.SIGKILL}, SIGTERM ${f.bySignal.SIGTERM}, SIGSTOP ${f.bySignal.SIGSTOP}; ` +
    `median ${f.failoverMs.median} ms, max ${f.failoverMs.max} ms), ${f.slotsDue} slots due: ` +
    `${f.ranOnTime} on time, ${f.caughtUp} caught up, ${f.lost} lost, ${f.ranTwice} run twice, ` +
    `${f.effectsTwice} effects written twice, ${f.refusedByFence} refused by the fence`
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

  test("catchUp 'all': every slot of the run has its effect, none twice", async () => {
    const figures = await run('all');
    console.log(`# ${describeFigures(figures)}`);
    assert.ok(
      figures.slotsDue >= FAILOVERS * 3,
      `a run long enough to judge: ${describeFigures(figures)}`,
    );
    assert.deepEqual(figures.lostSlots, [], `no slot lost: ${describeFigures(figures)}`);
    assert.equal(figures.effectsTwice, 0, 'keyed by slot and fenced: no effect twice');
    assert.ok(
      figures.caughtUp > 0,
      `failovers left slots to catch up: ${describeFigures(figures)}`,
    );
  });

  test("catchUp 'skip' (the behaviour before the ledger): the slots of a failover are lost", async () => {
    const figures = await run('skip');
    console.log(`# ${describeFigures(figures)}`);
    assert.ok(figures.lost > 0, `slots are lost without catch-up: ${describeFigures(figures)}`);
    assert.equal(figures.caughtUp, 0, 'nothing runs late under skip');
    assert.equal(figures.effectsTwice, 0, 'keyed by slot and fenced: no effect twice');
  });
});
