import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type AdvertisedCandidate,
  type LeaseRecord,
  newerTemplateCandidates,
  templateBackoffAfterTakeover,
  templateBackoffMs,
} from 'nest-leader';

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
const entry = (identity: string, podTemplateHash: string, startedSeconds: number) =>
  ({
    identity,
    podTemplateHash,
    priority: 0,
    startedAt: at(startedSeconds),
  }) as AdvertisedCandidate;

/** old-1, old-2 of template `aaa` (started at 0 and 1 s), new-1 of `bbb` (started at 60 s). */
const candidates = [entry('old-1', 'aaa', 0), entry('old-2', 'aaa', 1), entry('new-1', 'bbb', 60)];
const heldBy = (holderIdentity: string, extra: Partial<LeaseRecord> = {}): LeaseRecord => ({
  holderIdentity,
  leaseDurationSeconds: 15,
  leaseTransitions: 7,
  candidates,
  ...extra,
});

describe('newer-template yield: which template is newer, and what a takeover records', () => {
  test('the newer template is the newest one when it is not our own; ours or an older one is not', () => {
    assert.deepEqual(
      newerTemplateCandidates(candidates, candidates[0]!).map((c) => c.identity),
      ['new-1'],
    );
    assert.deepEqual(newerTemplateCandidates(candidates, candidates[2]!), []);
    assert.deepEqual(
      newerTemplateCandidates(candidates, { ...candidates[0]!, podTemplateHash: undefined }),
      [],
    );
  });

  test('taking over an expired holder of the newest template records it, counting losses in a row', () => {
    assert.deepEqual(templateBackoffAfterTakeover(heldBy('new-1'), 'old-2', 'aaa'), {
      podTemplateHash: 'bbb',
      failures: 1,
    });
    const again = heldBy('new-1', { templateBackoff: { podTemplateHash: 'bbb', failures: 3 } });
    assert.deepEqual(templateBackoffAfterTakeover(again, 'old-2', 'aaa'), {
      podTemplateHash: 'bbb',
      failures: 4,
    });
  });

  test('nothing new is recorded for a handoff to us, a release, our own lost term, our own template or an older one', () => {
    const kept = { podTemplateHash: 'zzz', failures: 1 };
    const handed = heldBy('old-2', {
      handoff: { to: 'old-2', leaseTransitions: 7 },
      templateBackoff: kept,
    });
    assert.deepEqual(templateBackoffAfterTakeover(handed, 'old-2', 'aaa'), kept);
    assert.equal(templateBackoffAfterTakeover(heldBy(''), 'old-2', 'aaa'), undefined);
    assert.equal(templateBackoffAfterTakeover(heldBy('old-2'), 'old-2', 'aaa'), undefined);
    assert.equal(templateBackoffAfterTakeover(heldBy('old-1'), 'old-2', 'aaa'), undefined);
    // A new pod taking over from a crashed old leader: the old template is not the newest.
    assert.equal(templateBackoffAfterTakeover(heldBy('old-1'), 'new-1', 'bbb'), undefined);
  });

  test('the backoff: 5 min, doubling with each loss in a row, at most 1 h', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 32].map((failures) => templateBackoffMs(failures) / 60_000),
      [5, 10, 20, 40, 60, 60],
    );
  });
});
