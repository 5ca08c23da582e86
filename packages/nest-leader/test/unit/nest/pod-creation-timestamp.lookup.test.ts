import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeaseLock } from 'nest-leader/core';
import { MemoryLock } from 'nest-leader/testing';
import { lookUpPodCreationTimestamp } from '../../../dist/esm/nest/elections/pod-creation-timestamp.lookup.js';
import type { ResolvedElectionOptions } from '../../../dist/esm/nest/elections/elections.interfaces.js';
import { KubeConfig } from '@kubernetes/client-node';

const options = (given: Partial<ResolvedElectionOptions> = {}) =>
  ({ name: 'default', podTemplateHash: 'aaa', ...given }) as ResolvedElectionOptions;
const TOKEN = 'sekrit-bearer-token-4f1c';
/** A Lease lock whose API server is not there (nothing listens on port 1). */
function lease(): LeaseLock {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u', token: TOKEN }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new LeaseLock({ kubeConfig, name: 'billing', namespace: 'prod' });
}
const pod = { POD_NAME: 'billing-7d9f-abcde', POD_NAMESPACE: 'prod' };

/** The warnings logged. */
function warnings(): { warn(message: string): void; lines: string[] } {
  const lines: string[] = [];
  return { warn: (message) => lines.push(message), lines };
}

describe("LeaderModule reads its Pod's creationTimestamp only when it dates a template on a Lease", () => {
  test('a given podCreationTimestamp is used as is: no request, no warning', async () => {
    const given = new Date('2026-12-01T10:00:00Z');
    const log = warnings();
    const read = await lookUpPodCreationTimestamp(
      options({ podCreationTimestamp: given }),
      lease(),
      log,
      pod,
    );
    assert.equal(read, given);
    assert.deepEqual(log.lines, []);
  });

  test('nothing to date (no podTemplateHash, or a lock that is not a Lease): undefined, no warning', async () => {
    const log = warnings();
    assert.equal(
      await lookUpPodCreationTimestamp(options({ podTemplateHash: undefined }), lease(), log, pod),
      undefined,
    );
    assert.equal(
      await lookUpPodCreationTimestamp(options(), new MemoryLock(), log, pod),
      undefined,
    );
    assert.deepEqual(log.lines, []);
  });

  test('POD_NAME unset, or not a Pod name: one warning naming what to set, undefined', async () => {
    for (const env of [{ POD_NAMESPACE: 'prod' }, { ...pod, POD_NAME: '../secrets' }]) {
      const log = warnings();
      assert.equal(await lookUpPodCreationTimestamp(options(), lease(), log, env), undefined);
      assert.equal(log.lines.length, 1);
      assert.match(log.lines[0]!, /POD_NAME (unset|"\.\.\/secrets")/);
      assert.match(log.lines[0]!, /dated by its container start/);
    }
  });

  test('the API server unreachable: one warning naming the request, never the token; undefined', async () => {
    const log = warnings();
    assert.equal(await lookUpPodCreationTimestamp(options(), lease(), log, pod), undefined);
    assert.equal(log.lines.length, 1);
    assert.match(log.lines[0]!, /billing-7d9f-abcde/);
    assert.match(log.lines[0]!, /creationTimestamp/);
    assert.ok(!log.lines[0]!.includes(TOKEN), 'the credentials are never echoed');
  });
});
