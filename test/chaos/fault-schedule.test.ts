import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BAG_EXTRAS, FAULT_KINDS, type FaultKind } from './fault-kinds.js';
import { FaultSchedule } from './fault-schedule.js';

const BAG_SIZE =
  FAULT_KINDS.length + Object.values(BAG_EXTRAS).reduce((sum, n) => sum + (n ?? 0), 0);

function draw(schedule: FaultSchedule, n: number): FaultKind[] {
  return Array.from({ length: n }, () => schedule.next());
}

describe('FaultSchedule', () => {
  it('deals every kind once per bag, plus the extras', () => {
    const kinds = draw(new FaultSchedule(7), 3 * BAG_SIZE);
    for (let bag = 0; bag < 3; bag++) {
      const counts = new Map<FaultKind, number>();
      for (const kind of kinds.slice(bag * BAG_SIZE, (bag + 1) * BAG_SIZE)) {
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
      }
      for (const kind of FAULT_KINDS) {
        assert.equal(counts.get(kind), 1 + (BAG_EXTRAS[kind] ?? 0), `${kind} in bag ${bag}`);
      }
    }
  });

  it('replays the same sequence from the same seed, and another from another seed', () => {
    const a = draw(new FaultSchedule(521998566), 2 * BAG_SIZE);
    assert.deepEqual(draw(new FaultSchedule(521998566), 2 * BAG_SIZE), a);
    assert.notDeepEqual(draw(new FaultSchedule(521998567), 2 * BAG_SIZE), a);
  });

  it('extras apply only to the kinds chosen (--kinds)', () => {
    const kinds = draw(new FaultSchedule(1, ['sigterm', 'lease-deleted']), 12);
    assert.equal(kinds.filter((k) => k === 'sigterm').length, 10);
    assert.equal(kinds.filter((k) => k === 'lease-deleted').length, 2);
  });

  it('refuses an empty list of kinds', () => {
    assert.throws(() => new FaultSchedule(1, []), /at least one fault kind/);
  });
});
