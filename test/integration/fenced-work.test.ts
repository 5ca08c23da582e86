/**
 * verifyLeadership() and @LeaderOnly({ verify }) on the real kube-apiserver: each verification
 * is one GET of the Lease (counted in the API server's audit log), and a Lease taken over by
 * another candidate behind the leader's back fails the verification.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  LeaderElectionService,
  LeaderModule,
  LeaderOnly,
  LeadershipLostDuringWorkError,
} from 'nest-leader';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  readAuditEvents,
  uniqueLeaseName,
} from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const leaseName = uniqueLeaseName('verify');
let hijackDuringWork: (() => Promise<void>) | undefined;

@Injectable()
class Ledger {
  @LeaderOnly({ verify: 'before-and-after' })
  async close(): Promise<string> {
    await hijackDuringWork?.();
    return 'closed';
  }
}

describe('fenced work on the real kube-apiserver', () => {
  let app: INestApplicationContext;
  let election: LeaderElectionService;
  const admin = coordinationApi(cluster);

  before(async () => {
    await grantLeaseAccess(cluster, 'alice');
    @Module({
      imports: [
        LeaderModule.forRoot({
          leaseName,
          namespace: cluster.namespace,
          identity: 'alice',
          lock: 'kubernetes',
          kubeConfig: kubeConfigFor(cluster, 'alice'),
          ...FAST_TIMINGS,
        }),
      ],
      providers: [Ledger],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.init();
    election = app.get(LeaderElectionService);
    await eventually(() => assert.ok(election.isLeader()), { timeoutMs: 10_000 });
  });
  after(async () => {
    await app?.close();
    await revokeLeaseAccess(cluster, 'alice');
  });

  const leaseGets = () =>
    readAuditEvents(cluster).filter(
      (e) =>
        e.verb === 'get' &&
        e.objectRef?.name === leaseName &&
        e.user.username === cluster.identities.alice!.username,
    ).length;

  test("@LeaderOnly({ verify: 'before-and-after' }): two GETs of the Lease per call", async () => {
    const calls = 5;
    const before = leaseGets();
    for (let i = 0; i < calls; i++) assert.equal(await app.get(Ledger).close(), 'closed');
    // The audit log is written asynchronously: wait for the last entries.
    const gets = await eventually(
      () => {
        const n = leaseGets() - before;
        assert.ok(n >= 2 * calls, `${n} GETs`);
        return n;
      },
      { timeoutMs: 3000 },
    );
    process.stdout.write(`# fenced work: ${calls} calls → ${gets} GETs of the Lease\n`);
    // Renewals use the cached object (PUT without GET); a renewal falling back to GET may add one.
    assert.ok(gets <= 2 * calls + 2, `${gets} GETs for ${calls} calls`);
  });

  test('the Lease taken over during the work: LeadershipLostDuringWorkError with the token, result withheld', async () => {
    const token = election.term!.leaseTransitions;
    hijackDuringWork = async () => {
      const lease = await admin.readNamespacedLease({
        name: leaseName,
        namespace: cluster.namespace,
      });
      lease.spec!.holderIdentity = 'intruder';
      lease.spec!.leaseTransitions = token + 1;
      await admin.replaceNamespacedLease({
        name: leaseName,
        namespace: cluster.namespace,
        body: lease,
      });
    };
    try {
      await assert.rejects(app.get(Ledger).close(), (error: unknown) => {
        assert.ok(error instanceof LeadershipLostDuringWorkError);
        assert.equal(error.leaseTransitions, token);
        return true;
      });
    } finally {
      hijackDuringWork = undefined;
    }
    assert.equal(await election.verifyLeadership(), false);
  });
});
