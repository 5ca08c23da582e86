/**
 * LeaderModule dates its pod template by its Pod's creation, read from the real kube-apiserver
 * (one `get` of the Pod POD_NAME names): the Lease's candidates annotation carries the Pod's
 * `metadata.creationTimestamp`, which a container restart does not renew (pod chaos seed
 * 3344). A Pod that cannot be read costs one warning, never the election.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Module, type INestApplicationContext, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CoreV1Api } from '@kubernetes/client-node';
import { LeaderElectionService, LeaderModule } from 'nest-leader';
import { CANDIDATES_ANNOTATION } from 'nest-leader/core';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  uniqueLeaseName,
} from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { eventually } from '../support/eventually.js';
import { createPodObject } from '../support/pod-objects.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;
const core = kubeConfigFor(cluster).makeApiClient(CoreV1Api);
const podName = `creation-${randomBytes(3).toString('hex')}`;

/** Nest's log lines, as they were printed. */
class RecordingNestLogger implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

/** A Nest app leading `leaseName` as `identity`, with POD_NAME/POD_NAMESPACE set to `pod`. */
async function startApp(
  leaseName: string,
  identity: string,
  pod: string,
  logger: LoggerService,
): Promise<INestApplicationContext> {
  const saved = { POD_NAME: process.env.POD_NAME, POD_NAMESPACE: process.env.POD_NAMESPACE };
  process.env.POD_NAME = pod;
  process.env.POD_NAMESPACE = namespace;
  try {
    @Module({
      imports: [
        LeaderModule.forRoot({
          leaseName,
          namespace,
          identity,
          lock: 'kubernetes',
          kubeConfig: kubeConfigFor(cluster),
          podTemplateHash: 'aaa',
          ...FAST_TIMINGS,
        }),
      ],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger });
    await app.init();
    return app;
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** The advertisement of `identity` on the Lease, as stored. */
async function advertised(leaseName: string, identity: string): Promise<Record<string, unknown>> {
  const lease = await coordinationApi(cluster).readNamespacedLease({ name: leaseName, namespace });
  const text = lease.metadata?.annotations?.[CANDIDATES_ANNOTATION];
  assert.ok(text, 'the candidates annotation is written');
  const entry = (JSON.parse(text) as Record<string, unknown>[]).find(
    (e) => e.identity === identity,
  );
  assert.ok(entry, `${identity} advertises itself`);
  return entry;
}

describe("LeaderModule advertises its Pod's creationTimestamp", { timeout: 60_000 }, () => {
  let created: Date;
  const apps: INestApplicationContext[] = [];

  before(async () => {
    const pod = await createPodObject(core, namespace, podName);
    created = pod.metadata!.creationTimestamp!;
    // The API server keeps whole seconds: a process started in the same second must still
    // see a creation time at or before its start.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  });
  after(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await core.deleteNamespacedPod({ name: podName, namespace }).catch(() => undefined);
  });

  test("the Pod's creationTimestamp is read once at startup and advertised beside startedAt", async () => {
    const leaseName = uniqueLeaseName('pod-created');
    const logger = new RecordingNestLogger();
    const app = await startApp(leaseName, 'with-pod', podName, logger);
    apps.push(app);
    const election = app.get(LeaderElectionService);
    await eventually(() => assert.ok(election.isLeader()), { timeoutMs: 10_000 });
    const entry = await advertised(leaseName, 'with-pod');
    assert.equal(entry.podTemplateHash, 'aaa');
    assert.equal(entry.podCreationTimestamp, created.toISOString());
    assert.ok(
      Date.parse(entry.startedAt as string) > created.getTime(),
      'the container started after its Pod was created',
    );
    assert.deepEqual(logger.warnings, [], 'nothing to warn about');
  });

  test('a Pod that cannot be read (not found): one warning naming the request, no creation time, the election unaffected', async () => {
    const leaseName = uniqueLeaseName('pod-missing');
    const logger = new RecordingNestLogger();
    const app = await startApp(leaseName, 'without-pod', `${podName}-gone`, logger);
    apps.push(app);
    const election = app.get(LeaderElectionService);
    await eventually(() => assert.ok(election.isLeader()), { timeoutMs: 10_000 });
    const entry = await advertised(leaseName, 'without-pod');
    assert.equal(entry.podCreationTimestamp, undefined);
    assert.equal(entry.podTemplateHash, 'aaa');
    const warnings = logger.warnings.filter((w) => /creationTimestamp/.test(w));
    assert.equal(warnings.length, 1, logger.warnings.join('\n'));
    assert.match(warnings[0]!, new RegExp(`${podName}-gone`));
    assert.match(warnings[0]!, /not found|NotFound|404/i);
    assert.match(warnings[0]!, /dated by its container start/);
  });
});
