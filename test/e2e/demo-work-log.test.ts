/**
 * The safety check the end-to-end tests and `pnpm demo` run over the replicas' logs
 * (checkLeaderTerms) catches what it is meant to catch; otherwise "no violations" says nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkLeaderTerms,
  type LeaderWorkEvent,
  longestWorkGap,
  parseDemoEvent,
} from '@nest-leader/demo/demo-events';

const work = (identity: string, leaseTransitions: number, at: string): LeaderWorkEvent => ({
  event: 'leader-work',
  task: 'reconcile',
  identity,
  leaseTransitions,
  at: `2026-01-30T10:00:${at}Z`,
});

describe('checkLeaderTerms', () => {
  it('accepts consecutive terms, each worked by one replica', () => {
    const { terms, violations } = checkLeaderTerms([
      work('a', 0, '01.000'),
      work('a', 0, '02.000'),
      work('b', 1, '09.000'),
      work('c', 2, '12.000'),
    ]);
    assert.deepEqual(violations, []);
    assert.deepEqual(
      terms.map((t) => [t.leaseTransitions, t.identities, t.lines]),
      [
        [0, ['a'], 2],
        [1, ['b'], 1],
        [2, ['c'], 1],
      ],
    );
  });

  it('flags a term worked by two replicas', () => {
    const { violations } = checkLeaderTerms([work('a', 0, '01.000'), work('b', 0, '02.000')]);
    assert.deepEqual(violations, ['term 0 was worked by 2 replicas: a, b']);
  });

  it('flags an old leader still working after the next term began', () => {
    const { violations } = checkLeaderTerms([
      work('a', 0, '01.000'),
      work('b', 1, '05.000'),
      work('a', 0, '05.500'),
    ]);
    assert.equal(violations.length, 1);
    assert.match(violations[0]!, /^term 0 \(a\) worked until .*05\.500Z, after term 1 \(b\) began/);
  });

  it('reads only JSON event lines from stdout', () => {
    assert.deepEqual(parseDemoEvent('{"event":"leader-work","task":"reconcile"}'), {
      event: 'leader-work',
      task: 'reconcile',
    });
    assert.equal(parseDemoEvent('{"level":"log","message":"not an event"}'), undefined);
    assert.equal(parseDemoEvent('{"event":"leader-wo'), undefined, 'a line cut by SIGKILL');
    assert.equal(parseDemoEvent('plain text'), undefined);
  });
});

describe('longestWorkGap', () => {
  const ms = (at: string) => new Date(`2026-01-30T10:00:${at}Z`).getTime();

  it('finds the longest stretch between lines of any replica, the window edges included', () => {
    const lines = [work('a', 0, '01.000'), work('a', 0, '02.000'), work('b', 1, '05.500')];
    assert.deepEqual(longestWorkGap(lines, ms('00.000'), ms('06.000')), {
      gapMs: 3500,
      fromMs: ms('02.000'),
      toMs: ms('05.500'),
    });
    assert.equal(longestWorkGap(lines, ms('04.000'), ms('09.000')).gapMs, 3500, 'edge to end');
  });

  it('a window without work is one gap as long as the window; lines outside it do not count', () => {
    const lines = [work('a', 0, '01.000'), work('a', 0, '20.000')];
    assert.equal(longestWorkGap(lines, ms('02.000'), ms('12.000')).gapMs, 10_000);
  });
});
