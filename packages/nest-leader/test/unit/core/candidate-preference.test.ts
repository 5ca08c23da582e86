import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type AdvertisedCandidate,
  parseAdvertisedCandidates,
  preferredCandidate,
} from 'nest-leader/core';
import { newestTemplate } from '../../../dist/esm/core/handoff/candidate-preference.js';

/** A candidate started `startedMin` minutes after 10:00. */
function c(
  identity: string,
  startedMin: number,
  podTemplateHash?: string,
  priority = 0,
): AdvertisedCandidate {
  const candidate: AdvertisedCandidate = {
    identity,
    priority,
    startedAt: new Date(Date.UTC(2026, 0, 30, 10, startedMin)),
  };
  if (podTemplateHash !== undefined) candidate.podTemplateHash = podTemplateHash;
  return candidate;
}

describe('preferredCandidate: whom a leader hands off to', () => {
  test('a rollout: a candidate of the newest pod template, though older pods started earlier', () => {
    const candidates = [c('old-1', 0, 'aaa'), c('old-2', 1, 'aaa'), c('new-1', 30, 'bbb')];
    assert.equal(preferredCandidate(candidates, 'old-0')?.identity, 'new-1');
  });

  test("the newest template is the one whose earliest candidate started last: an old pod's restart does not make its template new", () => {
    const candidates = [
      c('old-1', 0, 'aaa'),
      c('old-restarted', 50, 'aaa'),
      c('new-1', 30, 'bbb'),
      c('new-2', 40, 'bbb'),
    ];
    assert.equal(newestTemplate(candidates), 'bbb');
    assert.equal(preferredCandidate(candidates, 'old-0')?.identity, 'new-1');
  });

  test("a rollout's only old pod restarted after the new template's first pod started (pod chaos seed 3344): its pod's creation, not its restart, dates the old template", () => {
    // The old leader's container was killed and restarted 0.2 s after the first new pod
    // started; the other old pods were gone. Its pod was created at 10:00.
    const restarted = { ...c('old-leader', 31, 'aaa'), podCreationTimestamp: c('', 0).startedAt };
    const candidates = [restarted, c('new-1', 30, 'bbb'), c('new-2', 32, 'bbb')];
    assert.equal(newestTemplate(candidates), 'bbb');
    assert.equal(preferredCandidate(candidates, 'x')?.identity, 'new-1');
    // Without the pod's creation, its restart makes the old template look newest: the defect.
    const { podCreationTimestamp: _, ...undated } = restarted;
    assert.equal(newestTemplate([undated, c('new-1', 30, 'bbb'), c('new-2', 32, 'bbb')]), 'aaa');
  });

  test("a new template's pods are dated by their creation too: a late-created new pod keeps its template newest", () => {
    const created = (min: number) => c('', min).startedAt;
    const candidates = [
      { ...c('old-1', 5, 'aaa'), podCreationTimestamp: created(0) },
      { ...c('new-1', 31, 'bbb'), podCreationTimestamp: created(30) },
      c('new-2', 32, 'bbb'),
    ];
    assert.equal(newestTemplate(candidates), 'bbb');
  });

  test('within the newest template, the higher priority wins over the earlier start', () => {
    const candidates = [c('new-1', 30, 'bbb', 0), c('new-2', 40, 'bbb', 5), c('old', 0, 'aaa', 9)];
    assert.equal(preferredCandidate(candidates, 'x')?.identity, 'new-2');
  });

  test('at equal template and priority, the earliest started wins; then the identity', () => {
    assert.equal(
      preferredCandidate([c('b', 12, 'h'), c('a', 11, 'h'), c('c', 13, 'h')], 'x')?.identity,
      'a',
    );
    assert.equal(preferredCandidate([c('b', 10, 'h'), c('a', 10, 'h')], 'x')?.identity, 'a');
  });

  test('never the leader itself, even when it ranks first', () => {
    const candidates = [c('leader', 30, 'bbb', 9), c('other', 0, 'aaa')];
    assert.equal(preferredCandidate(candidates, 'leader')?.identity, 'other');
  });

  test('the leader does not count when ranking templates: its own new template alone is not newest', () => {
    const candidates = [
      c('leader', 30, 'bbb'),
      c('other-old', 0, 'aaa'),
      c('other-new', 31, 'ccc'),
    ];
    assert.equal(preferredCandidate(candidates, 'leader')?.identity, 'other-new');
  });

  test('candidates without a pod template hash rank below every template', () => {
    const candidates = [c('unknown', 50, undefined, 9), c('old', 0, 'aaa')];
    assert.equal(preferredCandidate(candidates, 'x')?.identity, 'old');
  });

  test('without any hash: priority, then earliest start', () => {
    const candidates = [c('a', 5, undefined, 1), c('b', 1, undefined, 1), c('c', 0, undefined, 0)];
    assert.equal(preferredCandidate(candidates, 'x')?.identity, 'b');
  });

  test('nobody but the leader, or no list: undefined', () => {
    assert.equal(preferredCandidate([c('leader', 0, 'h')], 'leader'), undefined);
    assert.equal(preferredCandidate(undefined, 'leader'), undefined);
    assert.equal(preferredCandidate([], 'leader'), undefined);
  });
});

describe('parseAdvertisedCandidates: the stored list, read leniently', () => {
  test('reads the JSON text of the annotation, skipping malformed entries, the last of a repeated identity kept', () => {
    const text = JSON.stringify([
      { identity: 'a', podTemplateHash: 'h1', priority: 1, startedAt: '2026-01-30T10:00:00Z' },
      { identity: '', priority: 0, startedAt: '2026-01-30T10:00:00Z' },
      { identity: 'b', priority: 'high', startedAt: '2026-01-30T10:00:00Z' },
      { identity: 'c', priority: 0, startedAt: 'yesterday' },
      { identity: 'a', podTemplateHash: 'h2', priority: 2, startedAt: '2026-01-30T10:05:00Z' },
      'junk',
    ]);
    assert.deepEqual(parseAdvertisedCandidates(text), [
      {
        identity: 'a',
        podTemplateHash: 'h2',
        priority: 2,
        startedAt: new Date('2026-01-30T10:05:00Z'),
      },
    ]);
  });

  test('not JSON, or not an array: undefined', () => {
    assert.equal(parseAdvertisedCandidates('{'), undefined);
    assert.equal(parseAdvertisedCandidates('{"a":1}'), undefined);
    assert.equal(parseAdvertisedCandidates(undefined), undefined);
  });
});
