/**
 * A hostile peer on a real Lease (the real kube-apiserver): a foreign writer — a plain
 * client-node call, as any candidate allowed to update the Lease could make — writes what the
 * API server lets it write into the annotations and holderIdentity, while a nest-leader
 * candidate leads. The candidate is a whole Nest application with a leader-only recurring job
 * (the candidate harness's `scheduled-job-app`), so it reads and writes the schedule ledger.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  ApiException,
  PatchStrategy,
  setHeaderOptions,
  type V1Lease,
} from '@kubernetes/client-node';
import { SCHEDULE_LEDGER_ANNOTATION } from 'nest-leader/core';
import { coordinationApi, getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { CandidateProcess, leaseTarget } from '../support/candidate-process.js';
import { eventually } from '../support/eventually.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;
const admin = coordinationApi(cluster);
const USER = 'bob';

/** A merge patch of the Lease's annotations, as a peer would send it (no resourceVersion). */
async function annotate(name: string, annotations: Record<string, string>): Promise<void> {
  await admin.patchNamespacedLease(
    { name, namespace, body: { metadata: { annotations } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

function leaseWith(name: string, spec: V1Lease['spec'], annotations = {}): V1Lease {
  return { metadata: { name, namespace, annotations }, spec };
}

/** The status code of the ApiException `call` throws. */
async function refusal(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof ApiException, String(error));
    return error.code;
  }
  assert.fail('the API server accepted it');
}

describe('what the API server lets a peer write into a Lease', () => {
  test('annotations: 200 KB in one is accepted, more than 256 KiB in all is refused (422)', async () => {
    const name = uniqueLeaseName('peer-limits');
    await admin.createNamespacedLease({
      namespace,
      body: leaseWith(name, { holderIdentity: 'a' }, { 'peer.example/blob': 'x'.repeat(200_000) }),
    });
    assert.equal(
      await refusal(() => annotate(name, { 'peer.example/more': 'y'.repeat(70_000) })),
      422,
    );
    await admin.deleteNamespacedLease({ name, namespace });
  });

  test('holderIdentity: free text — "..", newlines, 100 KB — all accepted', async () => {
    const name = uniqueLeaseName('peer-holder');
    const holder = `..\n${'h'.repeat(100_000)}`;
    await admin.createNamespacedLease({
      namespace,
      body: leaseWith(name, { holderIdentity: holder }),
    });
    const read = await admin.readNamespacedLease({ name, namespace });
    assert.equal(read.spec?.holderIdentity, holder);
    await admin.deleteNamespacedLease({ name, namespace });
  });
});

describe('a leader while a peer writes hostile schedule ledgers into its Lease', () => {
  let dir: string;
  before(async () => {
    await grantLeaseAccess(cluster, USER);
    dir = mkdtempSync(join(tmpdir(), 'nest-leader-hostile-'));
  });
  after(async () => {
    await revokeLeaseAccess(cluster, USER);
    rmSync(dir, { recursive: true, force: true });
  });

  test('keeps leading and renewing through a 200 KB ledger and one of 10,000 entries: one bounded warning each, the ledger healed', async () => {
    const leaseName = uniqueLeaseName('hostile-ledger');
    const leader = await CandidateProcess.startReady({
      implementation: 'nest-leader',
      program: 'scheduled-job-app',
      ...leaseTarget(cluster, USER, leaseName),
      identity: 'steady',
      timings: FAST_TIMINGS,
      extraArgs: ['--catch-up', 'all', '--db', join(dir, 'effects.db'), '--job-ms', '50'],
    });
    try {
      const started = await leader.waitFor((e) => e.event === 'started', 20_000, 'leading');
      const term = started.leaseTransitions;
      const hostile = {
        // Valid JSON, over the 128 KiB a ledger is read up to.
        '200 KB': JSON.stringify({
          v: 1,
          jobs: { 'Peer.job': { s: ['2026-01-01T00:00:00.000Z', 1] } },
          padding: 'p'.repeat(200_000),
        }),
        // Under that, but 10,000 jobs (empty entries: slots would not fit the API's 256 KiB).
        '10,000 entries': JSON.stringify({
          v: 1,
          jobs: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, {}])),
        }),
      };
      for (const [what, text] of Object.entries(hostile)) {
        const before = await admin.readNamespacedLease({ name: leaseName, namespace });
        const renewedBefore = new Date(before.spec!.renewTime!).getTime();
        const warningsBefore = ledgerWarnings(leader).length;
        await annotate(leaseName, { [SCHEDULE_LEDGER_ANNOTATION]: text });

        // Renewed at least twice more, by the same holder in the same term, and healed.
        const healed = await eventually(
          async () => {
            const lease = await admin.readNamespacedLease({ name: leaseName, namespace });
            const ledger = lease.metadata?.annotations?.[SCHEDULE_LEDGER_ANNOTATION] ?? '';
            assert.ok(
              new Date(lease.spec!.renewTime!).getTime() >= renewedBefore + 2000,
              `${what}: renewed since`,
            );
            assert.ok(ledger.length < 20_000, `${what}: rewritten bounded (${ledger.length})`);
            return lease;
          },
          { timeoutMs: 15_000, intervalMs: 200 },
        );
        assert.equal(healed.spec?.holderIdentity, 'steady', what);
        assert.equal(healed.spec?.leaseTransitions, term, `${what}: no new term`);
        assert.equal(leader.exitStatus, undefined, `${what}: still running`);
        assert.ok(leader.leading, `${what}: still leading`);
        const jobs = Object.keys(
          (
            JSON.parse(healed.metadata!.annotations![SCHEDULE_LEDGER_ANNOTATION]!) as {
              jobs: Record<string, unknown>;
            }
          ).jobs,
        );
        assert.ok(jobs.length <= 512, `${what}: ${jobs.length} jobs written back`);
        assert.ok(
          jobs.some((job) => job.startsWith('SlotJob.')),
          `${what}: its own job kept`,
        );

        const warnings = ledgerWarnings(leader).slice(warningsBefore);
        assert.equal(warnings.length, 1, `${what}: one warning: ${JSON.stringify(warnings)}`);
        assert.ok(warnings[0]!.length < 400, `${what}: bounded: ${warnings[0]}`);
        console.log(`# ${what}: ${warnings[0]}`);
      }
      assert.deepEqual(
        leader.eventsWhere((e) => e.event === 'log' && e.level === 'error'),
        [],
        'no error logged',
      );
    } finally {
      await leader.dispose();
    }
  });
});

/** The candidate's warnings about the stored schedule ledger. */
function ledgerWarnings(candidate: CandidateProcess): string[] {
  return candidate
    .eventsWhere((e) => e.event === 'log' && e.level === 'warn')
    .map((e) => e.message!)
    .filter((message) => message.includes('schedule ledger'));
}
