import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CompletionWatermark } from '../../../dist/esm/core/schedule-ledger/completion-watermark.js';

const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1) + s * 1000);

describe('CompletionWatermark', () => {
  test('moves to each slot that settles in order', () => {
    const mark = new CompletionWatermark(at(9));
    mark.begin(at(10));
    assert.deepEqual(mark.settle(at(10)), at(10));
    mark.begin(at(11));
    assert.deepEqual(mark.settle(at(11)), at(11));
  });

  test('a newer slot settling first waits for an older one still running, then both pass', () => {
    const mark = new CompletionWatermark(at(9));
    mark.begin(at(10)); // a late catch-up run
    mark.begin(at(12)); // the on-time tick
    assert.equal(mark.settle(at(12)), undefined);
    assert.deepEqual(mark.watermark, at(9));
    assert.deepEqual(mark.settle(at(10)), at(12));
  });

  test('never moves backwards', () => {
    const mark = new CompletionWatermark(at(20));
    mark.begin(at(15));
    assert.equal(mark.settle(at(15)), undefined);
    assert.deepEqual(mark.watermark, at(20));
  });

  test('starts without a watermark when the ledger has none', () => {
    const mark = new CompletionWatermark(undefined);
    assert.equal(mark.watermark, undefined);
    mark.begin(at(1));
    assert.deepEqual(mark.settle(at(1)), at(1));
  });
});
