import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AdvertisedCandidate, LeaseRecord } from 'nest-leader/core';
import {
  createdRecord,
  renewalRecord,
  type TakeoverToken,
  takeoverRecord,
  type TermWrite,
} from '../../../dist/esm/core/election/term-records.js';

const EARLIER = new Date('2026-11-26T10:00:00.000Z');
const WRITE: TermWrite = { now: new Date('2026-11-26T10:05:00.000Z'), leaseDurationSeconds: 15 };

function candidate(identity: string): AdvertisedCandidate {
  return { identity, priority: 0, startedAt: EARLIER, podTemplateHash: 'abc' };
}

function held(holderIdentity: string, overrides: Partial<LeaseRecord> = {}): LeaseRecord {
  return {
    holderIdentity,
    leaseDurationSeconds: 10,
    acquireTime: EARLIER,
    renewTime: EARLIER,
    leaseTransitions: 7,
    ...overrides,
  };
}

function token(overrides: Partial<TakeoverToken> = {}): TakeoverToken {
  return { coordinated: false, highestSeen: undefined, next: (value) => value + 1, ...overrides };
}

describe('renewalRecord: a live term renewed', () => {
  test('keeps holder, acquireTime and leaseTransitions; renewTime and the duration are new', () => {
    const renewed = renewalRecord(held('me', { candidates: [candidate('peer')] }), WRITE);
    assert.deepEqual(renewed, {
      ...held('me', { candidates: [candidate('peer')] }),
      leaseDurationSeconds: 15,
      renewTime: WRITE.now,
    });
  });

  test('a record without acquireTime (written by another client) gets one', () => {
    const { acquireTime: _acquireTime, ...withoutAcquire } = held('me');
    assert.equal(renewalRecord(withoutAcquire, WRITE).acquireTime, WRITE.now);
  });
});

describe('takeoverRecord: a new term', () => {
  test('names the candidate with the next token and the write times', () => {
    const next = takeoverRecord(held('old'), 'me', WRITE, token());
    assert.deepEqual(next, {
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: WRITE.now,
      renewTime: WRITE.now,
      leaseTransitions: 8,
    });
  });

  test('the token comes from `next` (which wraps past the int32 maximum)', () => {
    const wrapped = takeoverRecord(held('old'), 'me', WRITE, token({ next: () => 0 }));
    assert.equal(wrapped.leaseTransitions, 0);
  });

  test('a Lease handed to this candidate keeps the handoff’s token: one handover, one transition', () => {
    const handed = held('me', { leaseTransitions: 8, handoff: { to: 'me', leaseTransitions: 8 } });
    const next = takeoverRecord(handed, 'me', WRITE, token());
    assert.equal(next.leaseTransitions, 8);
    assert.equal(next.handoff, undefined, 'the marker is cleared');
  });

  test('a stale marker (written at other transitions) is no handoff: the token goes up', () => {
    const stale = held('me', { leaseTransitions: 9, handoff: { to: 'me', leaseTransitions: 8 } });
    assert.equal(takeoverRecord(stale, 'me', WRITE, token()).leaseTransitions, 10);
  });

  test('coordinated: continues from the highest value seen when the controller reset it', () => {
    const reset = held('me', { leaseTransitions: 0 });
    const next = takeoverRecord(reset, 'me', WRITE, token({ coordinated: true, highestSeen: 41 }));
    assert.equal(next.leaseTransitions, 42);
    const ordinary = takeoverRecord(reset, 'me', WRITE, token({ highestSeen: 41 }));
    assert.equal(ordinary.leaseTransitions, 1, 'not coordinated: the Lease’s own count');
  });

  test('drops the advertisement of a handoff target that never took the Lease', () => {
    const untaken = held('ghost', {
      leaseTransitions: 8,
      handoff: { to: 'ghost', leaseTransitions: 8 },
      candidates: [candidate('ghost'), candidate('me')],
    });
    const next = takeoverRecord(untaken, 'me', WRITE, token());
    assert.deepEqual(
      next.candidates?.map((c) => c.identity),
      ['me'],
    );
    assert.equal(next.leaseTransitions, 9);
  });

  test('drops the advertisement of an expired holder, and any handoff offer, on a takeover', () => {
    const expired = held('crashed', {
      leaseTransitions: 3,
      candidates: [candidate('crashed'), candidate('other'), candidate('me')],
      handoffOffer: { to: 'other', from: 'crashed', leaseTransitions: 3 },
    });
    const next = takeoverRecord(expired, 'me', WRITE, token());
    assert.deepEqual(
      next.candidates?.map((c) => c.identity),
      ['other', 'me'],
    );
    assert.equal('handoffOffer' in next, false);
  });

  test('the last advertisement dropped: no candidates field at all (the annotation goes)', () => {
    const untaken = held('ghost', {
      leaseTransitions: 8,
      handoff: { to: 'ghost', leaseTransitions: 8 },
      candidates: [candidate('ghost')],
    });
    assert.equal('candidates' in takeoverRecord(untaken, 'me', WRITE, token()), false);
  });

  test('keeps fields it does not own (spec.strategy, other candidates)', () => {
    const foreign = held('old', {
      strategy: 'OldestEmulationVersion',
      candidates: [candidate('p')],
    });
    const next = takeoverRecord(foreign, 'me', WRITE, token());
    assert.equal(next.strategy, 'OldestEmulationVersion');
    assert.deepEqual(next.candidates, [candidate('p')]);
  });
});

describe('createdRecord: the Lease created', () => {
  test('with the given token and no candidates without an advertisement', () => {
    assert.deepEqual(createdRecord('me', WRITE, 0, undefined), {
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: WRITE.now,
      renewTime: WRITE.now,
      leaseTransitions: 0,
    });
  });

  test('with this candidate’s advertisement, there being nothing to read it from yet', () => {
    const created = createdRecord('me', WRITE, 12, candidate('me'));
    assert.equal(created.leaseTransitions, 12);
    assert.deepEqual(created.candidates, [candidate('me')]);
  });
});
