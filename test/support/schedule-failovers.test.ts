/**
 * The schedule-failover harness's pure parts: the fault rotation covers before, during and
 * after a run in CI's 6 failovers, and a slot run twice is classified by the README's two redo
 * cases — anything else is `unexplained` (so the integration test's assertion can fail).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  classifyRedo as classify,
  faultSchedule,
  type SlotRun,
  type TermEnd,
} from './schedule-failovers.js';

const RETRY_MS = 1000;
const SLOT_MS = 1_700_000_000_000;

/** classifyRedo with every earlier slot settled at time 0, unless `unsettled` lists it. */
function classifyRedo(
  earlier: SlotRun,
  later: SlotRun,
  ends: ReadonlyMap<number, TermEnd>,
  retryPeriodMs: number,
  unsettled: number[] = [],
) {
  return classify(earlier, later, ends, retryPeriodMs, SLOT_MS - 3000, (slot) =>
    unsettled.includes(slot) ? null : 0,
  );
}

function run(token: number, startedMonoMs: number, completedMonoMs: number | null): SlotRun {
  return {
    slotMs: SLOT_MS,
    token,
    writer: `w${token}`,
    startedMs: SLOT_MS + 5,
    startedMonoMs,
    completedMonoMs,
    refusedMonoMs: null,
  };
}

describe('schedule failovers: the fault rotation', () => {
  it('covers before, during and after a run, and SIGSTOP during one, within 6 failovers', () => {
    const six = faultSchedule(6);
    assert.deepEqual(new Set(six.map((f) => f.moment)), new Set(['before', 'during', 'after']));
    assert.deepEqual(new Set(six.map((f) => f.signal)), new Set(['SIGKILL', 'SIGTERM', 'SIGSTOP']));
    assert.ok(six.some((f) => f.signal === 'SIGSTOP' && f.moment === 'during'));
  });

  it('gives every signal every moment in 9 failovers', () => {
    const combos = faultSchedule(9).map((f) => `${f.signal}/${f.moment}`);
    assert.equal(new Set(combos).size, 9);
  });
});

describe('schedule failovers: why a slot ran twice', () => {
  const crashAt = (atMonoMs: number) => new Map([[1, { atMonoMs, graceful: false }]]);

  it('a run completed less than retryPeriod before its leader crashed: completed-before-crash', () => {
    const redo = classifyRedo(run(1, 0, 300), run(2, 5000, 5300), crashAt(900), RETRY_MS);
    assert.equal(redo.kind, 'completed-before-crash');
  });

  it('a run not completed when its term ended: begun-not-completed', () => {
    assert.equal(
      classifyRedo(run(1, 0, null), run(2, 5000, 5300), crashAt(150), RETRY_MS).kind,
      'begun-not-completed',
    );
    // Completed only after waking from a pause, past its term's end.
    assert.equal(
      classifyRedo(run(1, 0, 9000), run(2, 5000, 5300), crashAt(150), RETRY_MS).kind,
      'begun-not-completed',
    );
  });

  it('a run completed a retryPeriod or more before the crash: unexplained', () => {
    const redo = classifyRedo(run(1, 0, 300), run(2, 5000, 5300), crashAt(1400), RETRY_MS);
    assert.equal(redo.kind, 'unexplained');
  });

  it('a completed run above an earlier unsettled slot (the watermark waits for it): completed-past-an-unsettled-slot', () => {
    const ends = new Map([[1, { atMonoMs: 500, graceful: true }]]);
    assert.equal(
      classifyRedo(run(1, 0, 300), run(2, 5000, 5300), ends, RETRY_MS, [SLOT_MS - 2000]).kind,
      'completed-past-an-unsettled-slot',
    );
    assert.equal(
      classifyRedo(run(1, 0, 300), run(2, 5000, 5300), crashAt(1400), RETRY_MS, [SLOT_MS - 1000])
        .kind,
      'completed-past-an-unsettled-slot',
    );
  });

  it('a completed run redone after a graceful stop (its release carries the ledger): unexplained', () => {
    const ends = new Map([[1, { atMonoMs: 500, graceful: true }]]);
    assert.equal(
      classifyRedo(run(1, 0, 300), run(2, 5000, 5300), ends, RETRY_MS).kind,
      'unexplained',
    );
  });

  it('two runs in one term, or a later run begun before the earlier term ended: unexplained', () => {
    assert.equal(
      classifyRedo(run(1, 0, null), run(1, 5000, 5300), crashAt(150), RETRY_MS).kind,
      'unexplained',
    );
    assert.equal(
      classifyRedo(run(1, 0, null), run(2, 100, 400), crashAt(150), RETRY_MS).kind,
      'unexplained',
    );
  });
});
