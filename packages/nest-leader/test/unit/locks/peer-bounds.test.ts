import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  parseAdvertisedCandidates,
  parseLeaseHandoff,
  parseLeaseHandoffOffer,
} from 'nest-leader/core';
import {
  MAX_ADVERTISED_CANDIDATES,
  MAX_CANDIDATES_TEXT_LENGTH,
  MAX_MARKER_TEXT_LENGTH,
} from '../../../dist/esm/locks/peer-bounds.js';

const entry = (identity: string, extra: Record<string, unknown> = {}) => ({
  identity,
  priority: 0,
  startedAt: '2026-01-30T10:00:00Z',
  ...extra,
});

describe('annotations written by a hostile peer are bounded on read', () => {
  test('a candidates text of 200 KB is ignored as a whole', () => {
    const text = JSON.stringify([entry('a', { podTemplateHash: 'x'.repeat(200_000) })]);
    assert.ok(text.length > MAX_CANDIDATES_TEXT_LENGTH);
    assert.equal(parseAdvertisedCandidates(text), undefined);
  });

  test('10,000 entries: at most 32 are kept, the latest-started', () => {
    const many = Array.from({ length: 10_000 }, (_, i) =>
      entry(`c${i}`, { startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() }),
    );
    const kept = parseAdvertisedCandidates(many)!;
    assert.equal(kept.length, MAX_ADVERTISED_CANDIDATES);
    assert.deepEqual(
      kept.map((c) => c.identity),
      Array.from({ length: 32 }, (_, i) => `c${10_000 - 32 + i}`),
    );
  });

  test('identities that are empty, too long or carry a newline or bidi control are skipped', () => {
    const parsed = parseAdvertisedCandidates(
      JSON.stringify([
        entry(''),
        entry('x'.repeat(129)),
        entry('forged\nINFO leader is me'),
        entry('evil\u202egnp'),
        entry('ok'),
      ]),
    );
    assert.deepEqual(
      parsed?.map((c) => c.identity),
      ['ok'],
    );
  });

  test('podCreationTimestamp: kept when a time no later than startedAt, clamped; a later or invalid one is dropped', () => {
    const [kept, later, invalid, old] = parseAdvertisedCandidates([
      entry('kept', { podCreationTimestamp: '2026-01-30T09:59:00Z' }),
      entry('later', { podCreationTimestamp: '2026-01-30T10:00:01Z' }),
      entry('invalid', { podCreationTimestamp: { $gt: '' } }),
      entry('old', { podCreationTimestamp: '1900-01-01T00:00:00Z' }),
    ])!;
    assert.equal(kept!.podCreationTimestamp?.toISOString(), '2026-01-30T09:59:00.000Z');
    assert.equal(later!.podCreationTimestamp, undefined);
    assert.equal(invalid!.podCreationTimestamp, undefined);
    assert.equal(old!.podCreationTimestamp?.toISOString(), '2000-01-01T00:00:00.000Z');
    assert.deepEqual(
      [kept, later, invalid, old].map((c) => c!.identity),
      ['kept', 'later', 'invalid', 'old'],
    );
  });

  test('priorities are clamped to int32, times to 2000..2200; a hash that is no label value is dropped', () => {
    const [huge, tiny] = parseAdvertisedCandidates([
      entry('huge', { priority: 1e300, startedAt: '9999-01-01T00:00:00Z', podTemplateHash: 'a b' }),
      entry('tiny', { priority: -1e300, startedAt: '1900-01-01T00:00:00Z' }),
    ])!;
    assert.equal(huge!.priority, 2 ** 31 - 1);
    assert.equal(tiny!.priority, -(2 ** 31));
    assert.equal(huge!.startedAt.toISOString(), '2200-01-01T00:00:00.000Z');
    assert.equal(tiny!.startedAt.toISOString(), '2000-01-01T00:00:00.000Z');
    assert.equal(huge!.podTemplateHash, undefined);
  });

  test('a handoff marker or offer: too long, a bad identity or transitions outside int32 are ignored', () => {
    assert.equal(
      parseLeaseHandoff(JSON.stringify({ to: 'b', leaseTransitions: 1, pad: 'x'.repeat(2000) })),
      undefined,
    );
    assert.ok(MAX_MARKER_TEXT_LENGTH < 2000);
    assert.equal(parseLeaseHandoff({ to: 'b\nc', leaseTransitions: 1 }), undefined);
    assert.equal(parseLeaseHandoff({ to: 'b', leaseTransitions: 2 ** 31 }), undefined);
    assert.equal(parseLeaseHandoff({ to: 'b', leaseTransitions: -1 }), undefined);
    assert.deepEqual(parseLeaseHandoff({ to: 'b', leaseTransitions: 3 }), {
      to: 'b',
      leaseTransitions: 3,
    });

    assert.deepEqual(
      parseLeaseHandoffOffer('{"to":"b","from":"a","leaseTransitions":4,"accepted":true}'),
      { to: 'b', from: 'a', leaseTransitions: 4, accepted: true },
    );
    assert.deepEqual(
      parseLeaseHandoffOffer({ to: 'b', from: 'a', leaseTransitions: 4, accepted: 1 }),
      {
        to: 'b',
        from: 'a',
        leaseTransitions: 4,
      },
    );
    assert.equal(parseLeaseHandoffOffer({ to: 'b', from: '', leaseTransitions: 4 }), undefined);
    assert.equal(parseLeaseHandoffOffer({ to: 'b', from: 'a', leaseTransitions: 4.5 }), undefined);
    assert.equal(parseLeaseHandoffOffer([]), undefined);

    // The incarnation offered: a time, read as an advertisement's start; present but not a
    // time, the offer is malformed (nobody accepts it) rather than open to any incarnation.
    const started = '2026-12-02T01:00:00.123Z';
    assert.deepEqual(
      parseLeaseHandoffOffer(
        JSON.stringify({ to: 'b', from: 'a', leaseTransitions: 4, toStartedAt: started }),
      ),
      { to: 'b', from: 'a', leaseTransitions: 4, toStartedAt: new Date(started) },
    );
    for (const toStartedAt of ['yesterday', 17, null, { at: started }]) {
      assert.equal(
        parseLeaseHandoffOffer({ to: 'b', from: 'a', leaseTransitions: 4, toStartedAt }),
        undefined,
        JSON.stringify(toStartedAt),
      );
    }
  });
});
