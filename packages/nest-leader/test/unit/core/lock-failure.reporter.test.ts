import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type KubernetesApiErrorKind, LeaseApiError, LockConflictError } from 'nest-leader';
import {
  ACCESS_DENIED_GRACE_MS,
  isNotFound,
  LockFailureReporter,
  lockRequestOutcome,
} from '../../../dist/esm/core/election/lock-failure.reporter.js';
import { ManualClock } from 'nest-leader/testing';
import { RecordingLogger } from 'nest-leader/testing';

const LOCK = 'Lease default/test';

const apiError = (kind: KubernetesApiErrorKind, statusCode?: number): LeaseApiError =>
  new LeaseApiError({ kind, verb: 'update', name: 'test', namespace: 'default', statusCode });

function reporter() {
  const clock = new ManualClock();
  const logger = new RecordingLogger();
  return { clock, logger, failures: new LockFailureReporter(LOCK, logger, clock) };
}

const running = (): AbortSignal => new AbortController().signal;

describe('LockFailureReporter', () => {
  test('a conflict is a normal race: debug only', () => {
    const { logger, failures } = reporter();

    failures.failed('update', new LockConflictError(LOCK, 'update'), running());

    assert.deepEqual(
      logger.lines.map((l) => l.level),
      ['debug'],
    );
  });

  test('a transient failure is a warning, repeats of it rate-limited', async () => {
    const { clock, logger, failures } = reporter();

    failures.failed('get', apiError('transient', 503), running());
    await clock.advance(2_000);
    failures.failed('get', apiError('transient', 503), running());

    assert.equal(logger.matching('warn', 'get of Lease default/test failed').length, 1);
  });

  test('a configuration problem (403 on a verb that never worked) is an error at once', () => {
    const { logger, failures } = reporter();

    failures.failed('update', apiError('forbidden', 403), running());

    assert.equal(logger.matching('error', 'update of Lease default/test failed').length, 1);
  });

  test('a 403 on a verb that worked before is a warning for the grace period, then an error', async () => {
    const { clock, logger, failures } = reporter();
    failures.succeeded('update');

    failures.failed('update', apiError('forbidden', 403), running());
    await clock.advance(ACCESS_DENIED_GRACE_MS - 1);
    failures.failed('update', apiError('forbidden', 403), running());
    assert.equal(logger.matching('warn', 'credentials worked before').length, 1);
    assert.equal(logger.matching('error', '').length, 0);

    await clock.advance(1);
    failures.failed('update', apiError('forbidden', 403), running());

    assert.equal(logger.matching('error', 'update of Lease default/test failed').length, 1);
  });

  test('the grace is per verb: a 403 on another verb that never worked is an error at once', () => {
    const { logger, failures } = reporter();
    failures.succeeded('get');

    failures.failed('update', apiError('forbidden', 403), running());

    assert.equal(logger.matching('error', 'update of').length, 1);
  });

  test('a success ends the run of 403s: the next one starts a new grace period', async () => {
    const { clock, logger, failures } = reporter();
    failures.succeeded('get');
    failures.failed('get', apiError('forbidden', 403), running());
    await clock.advance(ACCESS_DENIED_GRACE_MS - 1);

    failures.succeeded('get');
    await clock.advance(5_000);
    failures.failed('get', apiError('forbidden', 403), running());

    assert.equal(logger.matching('error', '').length, 0);
  });

  test('nothing is logged when the term or the run was aborted meanwhile', () => {
    const { logger, failures } = reporter();
    const stopped = new AbortController();
    stopped.abort();

    failures.failed('get', apiError('forbidden', 403), stopped.signal);

    assert.deepEqual(logger.lines, []);
  });

  test('recovered() logs once, with the number of failures, and only after failures', () => {
    const { logger, failures } = reporter();
    failures.recovered();
    assert.deepEqual(logger.lines, []);

    failures.failed('get', apiError('transient', 503), running());
    failures.failed('get', apiError('transient', 503), running());
    failures.recovered();
    failures.recovered();

    assert.equal(logger.matching('info', 'reachable again after 2 failed attempt(s)').length, 1);
  });
});

describe('lockRequestOutcome', () => {
  const idle = (): AbortSignal => new AbortController().signal;
  const aborted = (): AbortSignal => AbortSignal.abort();

  test('classifies conflicts, Kubernetes errors, stops and timeouts', () => {
    assert.equal(
      lockRequestOutcome(new LockConflictError(LOCK, 'create'), idle(), idle()),
      'conflict',
    );
    assert.equal(lockRequestOutcome(apiError('forbidden', 403), idle(), idle()), 'forbidden');
    assert.equal(lockRequestOutcome(new Error('x'), aborted(), aborted()), 'aborted');
    assert.equal(lockRequestOutcome(new Error('x'), aborted(), idle()), 'timeout');
    assert.equal(lockRequestOutcome(new Error('x'), idle(), idle()), 'unknown');
  });

  test('isNotFound() is true for a Kubernetes 404 only', () => {
    assert.equal(isNotFound(apiError('not-found', 404)), true);
    assert.equal(isNotFound(apiError('conflict', 409)), false);
    assert.equal(isNotFound(new Error('not found')), false);
  });
});
