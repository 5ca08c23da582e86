import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UNREADABLE_HOLDER } from 'nest-leader/core';
import {
  formatLeaderAnnotation,
  parseLeaderAnnotation,
} from '../../../dist/esm/locks/kubernetes-object/leader-annotation.record.js';

function read(value: string | undefined) {
  const parsed = parseLeaderAnnotation(value);
  assert.ok(parsed.ok, 'readable');
  return parsed.record;
}

describe('the control-plane.alpha.kubernetes.io/leader record', () => {
  test("writes client-go's fields: leaderTransitions, integer duration, RFC 3339 times (µs)", () => {
    const text = formatLeaderAnnotation({
      holderIdentity: 'pod-a',
      leaseDurationSeconds: 15,
      acquireTime: new Date('2026-01-30T10:00:00.123Z'),
      renewTime: new Date('2026-01-30T10:00:05Z'),
      leaseTransitions: 7,
    });
    assert.deepEqual(JSON.parse(text), {
      holderIdentity: 'pod-a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-30T10:00:00.123000Z',
      renewTime: '2026-01-30T10:00:05.000000Z',
      leaderTransitions: 7,
    });
  });

  test('reads back what it writes', () => {
    const record = {
      holderIdentity: 'pod-a',
      leaseDurationSeconds: 4,
      acquireTime: new Date('2026-01-30T10:00:00.123Z'),
      renewTime: new Date('2026-01-30T10:00:01.5Z'),
      leaseTransitions: 3,
    };
    assert.deepEqual(read(formatLeaderAnnotation(record)), record);
  });

  test("reads client-go's own record (second-precision times)", () => {
    const record = read(
      '{"holderIdentity":"kcm-1","leaseDurationSeconds":15,"acquireTime":"2020-01-01T00:00:00Z","renewTime":"2020-01-01T00:00:10Z","leaderTransitions":2}',
    );
    assert.equal(record.leaseTransitions, 2);
    assert.equal(record.renewTime?.toISOString(), '2020-01-01T00:00:10.000Z');
  });

  test("reads the Python client's record: string duration, naive timestamps, no transitions", () => {
    const record = read(
      '{"holderIdentity": "py-1", "leaseDurationSeconds": "4", "acquireTime": "2026-11-22 11:30:00.123456", "renewTime": "2026-11-22 11:30:01.654321"}',
    );
    assert.equal(record.holderIdentity, 'py-1');
    assert.equal(record.leaseDurationSeconds, 4);
    assert.equal(record.leaseTransitions, 0);
    assert.ok(record.renewTime instanceof Date && !Number.isNaN(record.renewTime.getTime()));
  });

  test("reads fabric8's leaseDuration, as seconds or ISO 8601", () => {
    assert.equal(
      read('{"holderIdentity":"j","leaseDuration":15.000000000}').leaseDurationSeconds,
      15,
    );
    assert.equal(read('{"holderIdentity":"j","leaseDuration":"PT1M30S"}').leaseDurationSeconds, 90);
  });

  test('an absent or empty annotation is a free record', () => {
    for (const value of [undefined, '', '  ']) {
      assert.deepEqual(read(value), {
        holderIdentity: '',
        leaseDurationSeconds: 0,
        leaseTransitions: 0,
      });
    }
  });

  test('a Python placeholder (null fields) reads as free, nonsense fields as absent', () => {
    const record = read(
      '{"holderIdentity":null,"leaseDurationSeconds":"x","leaderTransitions":-1,"renewTime":"never"}',
    );
    assert.deepEqual(record, { holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 });
  });

  test('an unreadable annotation rewritten reads as a changed record (a renewal), unchanged as the same', () => {
    const first = parseLeaderAnnotation('garbage-1').record;
    assert.deepEqual(parseLeaderAnnotation('garbage-1').record, first);
    assert.notEqual(
      parseLeaderAnnotation('garbage-2').record.renewTime?.getTime(),
      first.renewTime?.getTime(),
    );
  });

  test('not a JSON object: held by an unreadable holder, never free, with a reason', () => {
    for (const value of ['{not json', '42', '"pod-a"', '[1]', 'null']) {
      const parsed = parseLeaderAnnotation(value);
      assert.equal(parsed.ok, false, value);
      assert.equal(parsed.record.holderIdentity, UNREADABLE_HOLDER);
      assert.equal(parsed.record.leaseDurationSeconds, 0);
      assert.ok(!parsed.ok && parsed.reason.length > 0);
    }
  });
});
