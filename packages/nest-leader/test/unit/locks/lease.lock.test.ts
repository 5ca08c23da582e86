import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KubeConfig, type V1Lease } from '@kubernetes/client-node';
import {
  HANDOFF_ANNOTATION,
  InvalidLeaderElectionOptionError,
  type LeaseRecord,
  LeaseLock,
  parseLeaseHandoff,
  parseLeaseRecord,
  parseTemplateBackoff,
  TEMPLATE_BACKOFF_ANNOTATION,
} from 'nest-leader';
import { unreachableKubeConfig } from './kube-config.fixture.js';

const kubeConfig = unreachableKubeConfig;

const invalid = (option: string) => (error: unknown) =>
  error instanceof InvalidLeaderElectionOptionError && error.option === option;

// What LeaseLock does over HTTP is tested against the real kube-apiserver:
// test/integration/lease-lock.test.ts.
describe('LeaseLock construction', () => {
  test('describes itself as "Lease <namespace>/<name>"', () => {
    const lock = new LeaseLock({
      kubeConfig: kubeConfig(),
      name: 'billing-worker',
      namespace: 'prod',
    });
    assert.equal(lock.description, 'Lease prod/billing-worker');
  });

  test('rejects an invalid name or namespace, naming the option', () => {
    const kc = kubeConfig();
    assert.throws(
      () => new LeaseLock({ kubeConfig: kc, name: 'Billing_Worker', namespace: 'prod' }),
      invalid('name'),
    );
    assert.throws(
      () => new LeaseLock({ kubeConfig: kc, name: 'a'.repeat(254), namespace: 'prod' }),
      invalid('name'),
    );
    assert.throws(
      () => new LeaseLock({ kubeConfig: kc, name: 'ok', namespace: 'prod.eu' }),
      invalid('namespace'),
    );
  });

  test('rejects a kubeconfig without a current cluster and a non-positive requestTimeoutMs', () => {
    assert.throws(
      () => new LeaseLock({ kubeConfig: new KubeConfig(), name: 'ok', namespace: 'prod' }),
      invalid('kubeConfig'),
    );
    assert.throws(
      () =>
        new LeaseLock({
          kubeConfig: kubeConfig(),
          name: 'ok',
          namespace: 'prod',
          requestTimeoutMs: 0,
        }),
      invalid('requestTimeoutMs'),
    );
  });
});

describe('parseLeaseRecord (what LeaseLock makes of a Lease spec)', () => {
  test('a Lease without spec reads as a free record with defaults', () => {
    assert.deepEqual(parseLeaseRecord({}), {
      holderIdentity: '',
      leaseDurationSeconds: 0,
      leaseTransitions: 0,
    });
  });

  test('garbage in the fields never throws', () => {
    const record = parseLeaseRecord({
      holderIdentity: 42,
      renewTime: 'yesterday',
      leaseDurationSeconds: 'long',
      leaseTransitions: null,
    });
    assert.deepEqual(record, { holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 });
  });

  test('six-digit MicroTimes written by other clients parse to the millisecond', () => {
    const record = parseLeaseRecord({ renewTime: '2026-01-30T10:00:00.123456Z' });
    assert.equal(record.renewTime!.toISOString(), '2026-01-30T10:00:00.123Z');
  });
});

/** A LeaseLock whose record ↔ object mapping can be called without an API server. */
class MappingProbe extends LeaseLock {
  constructor() {
    super({ kubeConfig: kubeConfig(), name: 'billing-worker', namespace: 'prod' });
  }
  read(lease: V1Lease): LeaseRecord {
    return this.toRecord(lease);
  }
  write(record: LeaseRecord, last: V1Lease): V1Lease {
    return this.updatedObject(record, '7', last);
  }
}

describe('LeaseLock: coordinated election fields (spec.strategy, spec.preferredHolder)', () => {
  test("a foreign writer's strategy and preferredHolder are read and written back unchanged", () => {
    const probe = new MappingProbe();
    const last: V1Lease = {
      metadata: { name: 'billing-worker' },
      spec: {
        holderIdentity: 'a',
        leaseDurationSeconds: 15,
        leaseTransitions: 4,
        strategy: 'OldestEmulationVersion',
        preferredHolder: 'b',
      },
    };
    const record = probe.read(last);
    assert.equal(record.strategy, 'OldestEmulationVersion');
    assert.equal(record.preferredHolder, 'b');

    const renewed = probe.write({ ...record, renewTime: new Date() }, last);
    assert.equal(renewed.spec!.strategy, 'OldestEmulationVersion');
    assert.equal(renewed.spec!.preferredHolder, 'b');
  });
});

describe('LeaseLock: the template backoff as the annotation nest-leader/template-backoff', () => {
  const spec = { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 4 };

  test('round trip: written as JSON, read back; a record without one removes the annotation', () => {
    const probe = new MappingProbe();
    const last: V1Lease = {
      metadata: { name: 'billing-worker', annotations: { team: 'x' } },
      spec,
    };
    const backoff = { podTemplateHash: '7d9f8b6c5', failures: 2 };
    const written = probe.write({ ...spec, templateBackoff: backoff }, last);
    assert.equal(
      written.metadata!.annotations![TEMPLATE_BACKOFF_ANNOTATION],
      '{"podTemplateHash":"7d9f8b6c5","failures":2}',
    );
    assert.deepEqual(probe.read(written).templateBackoff, backoff);
    const cleared = probe.write({ ...spec }, written);
    assert.deepEqual(cleared.metadata!.annotations, { team: 'x' });
  });

  test('hostile values read as no backoff; failures are capped', () => {
    for (const text of [
      'not json',
      '{"podTemplateHash":"","failures":1}',
      '{"podTemplateHash":"has space","failures":1}',
      `{"podTemplateHash":"${'a'.repeat(64)}","failures":1}`,
      '{"podTemplateHash":"abc","failures":0}',
      '{"podTemplateHash":"abc","failures":1.5}',
      '{"podTemplateHash":"abc"}',
      '[]',
    ]) {
      assert.equal(parseTemplateBackoff(text), undefined, text);
    }
    assert.deepEqual(parseTemplateBackoff({ podTemplateHash: 'abc', failures: 1e9 }), {
      podTemplateHash: 'abc',
      failures: 32,
    });
  });
});

describe('LeaseLock: the handoff marker as the annotation nest-leader/handoff', () => {
  const spec = { holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 4 };

  test('reads the annotation into LeaseRecord.handoff', () => {
    const record = new MappingProbe().read({
      metadata: { annotations: { [HANDOFF_ANNOTATION]: '{"to":"b","leaseTransitions":4}' } },
      spec,
    });
    assert.deepEqual(record.handoff, { to: 'b', leaseTransitions: 4 });
  });

  test('a malformed annotation reads as no marker', () => {
    for (const text of ['not json', '{"to":"","leaseTransitions":4}', '{"to":"b"}', '[]']) {
      const record = new MappingProbe().read({
        metadata: { annotations: { [HANDOFF_ANNOTATION]: text } },
        spec,
      });
      assert.equal(record.handoff, undefined, text);
    }
  });

  test('writes the marker, and removes it for a record without one, keeping other annotations', () => {
    const probe = new MappingProbe();
    const last: V1Lease = {
      metadata: { name: 'billing-worker', annotations: { team: 'billing' } },
      spec,
    };
    const handedOff = probe.write({ ...spec, handoff: { to: 'b', leaseTransitions: 4 } }, last);
    assert.deepEqual(handedOff.metadata!.annotations, {
      team: 'billing',
      [HANDOFF_ANNOTATION]: '{"to":"b","leaseTransitions":4}',
    });

    const taken = probe.write({ ...spec, leaseTransitions: 5 }, handedOff);
    assert.deepEqual(taken.metadata!.annotations, { team: 'billing' });
    assert.equal(taken.metadata!.resourceVersion, '7');
  });

  test('parseLeaseHandoff accepts the object or its JSON text, nothing else', () => {
    assert.deepEqual(parseLeaseHandoff({ to: 'b', leaseTransitions: 1 }), {
      to: 'b',
      leaseTransitions: 1,
    });
    assert.deepEqual(parseLeaseHandoff('{"to":"b","leaseTransitions":1}'), {
      to: 'b',
      leaseTransitions: 1,
    });
    assert.equal(parseLeaseHandoff(undefined), undefined);
    assert.equal(parseLeaseHandoff({ to: 'b', leaseTransitions: 'x' }), undefined);
  });
});
