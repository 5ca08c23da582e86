/**
 * The happy path is quiet: a clean SIGTERM handover (the leader's `app.close()`, as
 * `enableShutdownHooks()` runs it) under default options logs no warning and no error, and at
 * log level one line per leadership change and process. Two replicas of one application on a
 * MemoryLock and a ManualClock, with a leader-only `@Interval(1000)` job under the default
 * `catchUp: 'skip'`, ticked by the test (ScheduleModule's timers are real).
 */
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { LeaderOnly } from 'nest-leader';
import { ManualClock, MemoryLock, RecordingLogger } from 'nest-leader/testing';
import { type Replica, startReplica } from './support.js';

const START_MS = new Date('2026-01-01T00:00:00Z').getTime();

@Injectable()
class InvoiceJobs {
  runs = 0;

  @LeaderOnly()
  @Interval(1000)
  closeInvoices(): void {
    this.runs += 1;
  }
}

const replicas: Replica[] = [];
afterEach(async () => {
  for (const replica of replicas.splice(0)) await replica.app.close();
});

test('a clean SIGTERM handover under default options: no warn/error lines, one log line per leadership change', async () => {
  const lock = new MemoryLock();
  const clock = new ManualClock({ wallTime: new Date(START_MS) });
  // Nest's Logger is process-wide: the last application's logger gets both replicas' lines.
  const logger = new RecordingLogger();
  const start = async (identity: string, role: 'leader' | 'candidate') => {
    const replica = await startReplica({
      role,
      lock,
      clock,
      logger,
      providers: [InvoiceJobs],
      leader: { identity },
    });
    replicas.push(replica);
    return replica;
  };
  const a = await start('pod-a', 'leader');
  const b = await start('pod-b', 'candidate');
  const jobsA = a.app.get(InvoiceJobs);
  for (let slot = 1; slot <= 3; slot++) {
    await clock.advance(1000);
    jobsA.closeInvoices();
  }
  await clock.advance(900);
  logger.lines.length = 0;

  // SIGTERM → enableShutdownHooks → app.close(): drain, release; pod-b takes over.
  await a.app.close();
  replicas.splice(replicas.indexOf(a), 1);
  const took = b.election.waitForLeadership();
  for (let i = 0; i < 10 && !b.election.isLeader(); i++) await clock.advance(500);
  await took;
  await clock.advance(2500);
  await clock.settle();

  assert.ok(b.election.isLeader(), 'pod-b took over');
  assert.deepEqual(logger.messages('warn'), []);
  assert.deepEqual(logger.messages('error'), []);
  assert.deepEqual(
    logger.lines.filter((l) => l.level === 'log' || l.level === 'info').map((l) => l.message),
    [
      'Candidate "pod-a" stopped leading MemoryLock memory: stopped.',
      'Candidate "pod-b" acquired MemoryLock memory and started leading (term 1).',
    ],
  );
  // The routine details are still there, at debug level.
  assert.equal(logger.matching('debug', 'released MemoryLock memory').length, 1);
  assert.equal(logger.matching('debug', 'New leader of MemoryLock memory: "pod-b"').length, 1);
  assert.match(
    logger.matching('debug', 'InvoiceJobs.closeInvoices missed')[0] ?? '',
    /catchUp 'skip': running none late; 1 skipped by the policy/,
  );
  assert.equal(b.app.get(InvoiceJobs).runs, 0, "'skip' runs no missed slot");
});
