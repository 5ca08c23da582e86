import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ElectionObserver } from 'nest-leader';
import { combineElectionObservers } from 'nest-leader/observability';

const event = {
  election: 'billing',
  identity: 'pod-a',
  operation: 'get',
  outcome: 'success',
  durationMs: 1,
} as const;

describe('combineElectionObservers', () => {
  it('passes each event to every observer that has the method, in order', () => {
    const seen: string[] = [];
    const a: ElectionObserver = { lockRequest: (e) => seen.push(`a ${e.operation}`) };
    const b: ElectionObserver = { renewSlowPath: () => seen.push('b slow') };
    const c: ElectionObserver = { lockRequest: (e) => seen.push(`c ${e.operation}`) };
    const combined = combineElectionObservers(a, b, c);
    combined.lockRequest!(event);
    combined.renewSlowPath!(event);
    assert.deepEqual(seen, ['a get', 'c get', 'b slow']);
    assert.equal(combined.termStarted, undefined, 'no observer has it');
  });

  it('one observer throwing does not keep the event from the next', () => {
    const seen: string[] = [];
    const combined = combineElectionObservers(
      {
        lockRequest: () => {
          throw new Error('broken observer');
        },
      },
      { lockRequest: () => seen.push('second') },
    );
    combined.lockRequest!(event);
    assert.deepEqual(seen, ['second']);
  });

  it('flush() waits for every observer that has writes in flight', async () => {
    let done = 0;
    const slow = { flush: () => new Promise<void>((r) => setImmediate(() => r(void done++))) };
    await combineElectionObservers(slow, {}, slow).flush();
    assert.equal(done, 2);
  });
});
