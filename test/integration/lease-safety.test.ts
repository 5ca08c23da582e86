/**
 * The safety defects of issue 8 on the real kube-apiserver: a Lease deleted under a live
 * leader, a foreign writer touching the Lease's labels, and a leader process paused (SIGSTOP)
 * past its lease between two units of work.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { CandidateProcess } from '../support/candidate-process.js';
import { coordinationApi, getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { eventually, found } from '../support/eventually.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import {
  FAST_TIMINGS,
  makeCandidates,
  waitForLeader,
  watchSingleLeader,
  type Candidate,
  type LeadershipRecord,
} from '../support/candidates.js';
import { monotonicNowMs } from '../support/monotonic-time.js';

const cluster = getTestCluster();
const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;
const CANDIDATES = ['alice', 'bob', 'carol'] as const;
const admin = coordinationApi(cluster);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Safety on the real kube-apiserver (issue 8)', () => {
  let running: Candidate[] = [];
  before(async () => {
    for (const identity of [...CANDIDATES, 'dave']) await grantLeaseAccess(cluster, identity);
  });
  after(async () => {
    await Promise.all(running.map((c) => c.elector.stop()));
    for (const identity of [...CANDIDATES, 'dave']) await revokeLeaseAccess(cluster, identity);
  });

  test('Lease deleted three times under a live leader: never two leaders, tokens strictly increase', async (t) => {
    const leaseName = uniqueLeaseName('deleted');
    const history: LeadershipRecord[] = [];
    running = makeCandidates(cluster, leaseName, CANDIDATES, history);
    const watch = watchSingleLeader(running, 20);
    try {
      running.forEach((c) => c.elector.start());
      await waitForLeader(running, (leaseDurationSeconds + 2) * 1000);
      await sleep(1_500); // every candidate has seen the holder
      const gaps: number[] = [];
      for (let round = 0; round < 3; round++) {
        const leader = await waitForLeader(running, (2 * leaseDurationSeconds + 4) * 1000);
        const startsBefore = history.filter((h) => h.event === 'started').length;
        await admin.deleteNamespacedLease({ name: leaseName, namespace: cluster.namespace });
        const deletedAtMs = performance.now();

        const stopped = await eventually(
          () =>
            found(
              history.find(
                (h) =>
                  h.event === 'stopped' && h.identity === leader.identity && h.atMs >= deletedAtMs,
              ),
              'the leader stepped down',
            ),
          { timeoutMs: 5_000, intervalMs: 10 },
        );
        assert.ok(
          stopped.atMs - deletedAtMs <= (retryPeriodSeconds + 1.5) * 1000,
          `the leader stepped down ${Math.round(stopped.atMs - deletedAtMs)} ms after the deletion`,
        );
        const next = await eventually(
          () => found(history.filter((h) => h.event === 'started')[startsBefore], 'a new term'),
          { timeoutMs: (2 * leaseDurationSeconds + 4) * 1000, intervalMs: 10 },
        );
        gaps.push(next.atMs - deletedAtMs);
        await sleep(1_500); // everyone has seen the new holder before the next deletion
      }
      watch.stop();
      const tokens = history.filter((h) => h.event === 'started').map((h) => h.leaseTransitions);
      t.diagnostic(
        `tokens ${JSON.stringify(tokens)}; deletion → next term (ms) ${JSON.stringify(gaps.map(Math.round))}`,
      );
      assert.deepEqual(watch.violations, [], 'two candidates believed they led at once');
      assert.ok(watch.samples > 200, `${watch.samples} samples`);
      assert.equal(tokens.length, 4);
      for (let i = 1; i < tokens.length; i++) {
        assert.ok(tokens[i]! > tokens[i - 1]!, `tokens must strictly increase: ${tokens}`);
      }
      const lease = await admin.readNamespacedLease({
        name: leaseName,
        namespace: cluster.namespace,
      });
      assert.equal(lease.spec?.leaseTransitions, tokens.at(-1));
    } finally {
      watch.stop();
      await Promise.all(running.map((c) => c.elector.stop()));
      running = [];
    }
  });

  test('a label writer every 500 ms: a crashed leader is replaced within leaseDuration + 2 s', async (t) => {
    const leaseName = uniqueLeaseName('labels');
    const history: LeadershipRecord[] = [];
    running = makeCandidates(cluster, leaseName, CANDIDATES, history, { releaseOnStop: false });
    const watch = watchSingleLeader(running, 20);
    let writes = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        await admin
          .patchNamespacedLease(
            {
              name: leaseName,
              namespace: cluster.namespace,
              body: { metadata: { labels: { 'sync.example.com/tick': String(writes) } } },
            },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          )
          .then(() => writes++)
          .catch(() => undefined); // the Lease may not exist yet
        await sleep(500);
      }
    })();
    try {
      running.forEach((c) => c.elector.start());
      const leader = await waitForLeader(running, (leaseDurationSeconds + 2) * 1000);
      await sleep(3_000); // the leader keeps leading under the writes
      assert.equal(leader.elector.isLeader(), true, 'metadata writes do not unseat the leader');

      await leader.elector.stop(); // crash: no release
      const crashedAtMs = performance.now();
      const next = await eventually(
        () =>
          found(
            history.find((h) => h.event === 'started' && h.atMs >= crashedAtMs),
            'a takeover',
          ),
        { timeoutMs: (leaseDurationSeconds + 6) * 1000, intervalMs: 10 },
      );
      const takeoverMs = next.atMs - crashedAtMs;
      t.diagnostic(`takeover ${Math.round(takeoverMs)} ms after the crash; ${writes} label writes`);
      assert.ok(
        takeoverMs <= (leaseDurationSeconds + 2) * 1000,
        `takeover took ${Math.round(takeoverMs)} ms`,
      );
      assert.ok(writes >= 8, `the writer kept writing (${writes})`);
      assert.deepEqual(watch.violations, []);
      assert.ok(watch.samples > 100, `${watch.samples} samples of isLeader()`);
    } finally {
      writing = false;
      await writer;
      watch.stop();
      await Promise.all(running.map((c) => c.elector.stop()));
      running = [];
    }
  });

  for (const check of ['isLive', 'signal'] as const) {
    test(`a leader process paused (SIGSTOP) between two units of work refuses the second (term ${check === 'isLive' ? '.isLive()' : '.signal.aborted'})`, async () => {
      const leaseName = uniqueLeaseName(`paused-${check.toLowerCase()}`);
      const worker = await CandidateProcess.start({
        implementation: 'nest-leader',
        kubeconfigPath: cluster.identities.dave!.kubeconfigPath,
        leaseName,
        namespace: cluster.namespace,
        identity: 'dave',
        timings: FAST_TIMINGS,
        releaseOnCancel: false,
        extraArgs: ['--work-units', check],
      });
      const units = () => worker.eventsWhere((e) => e.event === 'unit-done');
      const history: LeadershipRecord[] = [];
      running = makeCandidates(cluster, leaseName, ['bob'], history, { releaseOnStop: false });
      try {
        await eventually(() => assert.ok(units().length >= 3, 'the worker leads and works'), {
          timeoutMs: 20_000,
          intervalMs: 10,
        });
        running[0]!.elector.start();
        await sleep(1_500); // bob has seen dave's record

        worker.pause();
        const stoppedAtMs = performance.now();
        const lastUnit = units().at(-1)!;
        const successor = await eventually(
          () =>
            found(
              history.find((h) => h.event === 'started'),
              'bob takes over',
            ),
          { timeoutMs: (leaseDurationSeconds + 4) * 1000, intervalMs: 10 },
        );
        assert.ok(successor.atMs - stoppedAtMs >= (leaseDurationSeconds - 1.5) * 1000);
        const resumedAtMs = monotonicNowMs(); // the worker's events are on CLOCK_MONOTONIC
        worker.resume();

        const refused = await worker.waitFor(
          (e) => e.event === 'unit-refused',
          5_000,
          'the worker refusing the next unit',
        );
        assert.equal(refused.token, lastUnit.token);
        assert.equal(refused.unit, lastUnit.unit! + 1, 'refused right at the next unit');
        const late = units().filter((e) => e.monotonicMs >= resumedAtMs);
        assert.deepEqual(late, [], 'no unit of work after waking');
        assert.equal(successor.leaseTransitions, lastUnit.token! + 1);
        const lease = await admin.readNamespacedLease({
          name: leaseName,
          namespace: cluster.namespace,
        });
        assert.equal(lease.spec?.holderIdentity, 'bob');
      } finally {
        await worker.dispose();
        await Promise.all(running.map((c) => c.elector.stop()));
        running = [];
      }
    });
  }
});
