/**
 * The happy path is quiet: a clean SIGTERM handover (the leader's `app.close()`, as
 * `enableShutdownHooks()` runs it) under default options logs no warning and no error, and at
 * log level one line per leadership change and process; the start, one line per election. Two replicas of one application on a
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

/** The messages at Nest's log level (`log`) or the elector's `info`, in order. */
function logLevelLines(logger: RecordingLogger): string[] {
  return logger.lines.filter((l) => l.level === 'log' || l.level === 'info').map((l) => l.message);
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
  // Start: one line per election with everything it resolved, then one per leadership change
  // (the core's "campaigning" line is at debug level).
  const resolved =
    'lock custom (MemoryLock memory), leaseDuration 15s, renewDeadline 10s, retryPeriod 2s, shutdownGrace 10000ms.';
  assert.deepEqual(logLevelLines(logger), [
    `Leader election starting: identity "pod-a", ${resolved}`,
    'Candidate "pod-a" acquired MemoryLock memory and started leading (term 0).',
    'Nest application successfully started',
    `Leader election starting: identity "pod-b", ${resolved}`,
    'New leader of MemoryLock memory: "pod-a".',
    'Nest application successfully started',
  ]);
  // The one warning: the test ticks the job itself, so there is no ScheduleModule.forRoot().
  assert.deepEqual(
    logger.messages('warn').filter((m) => !m.includes('ScheduleModule.forRoot() is not imported')),
    [],
  );
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
  assert.deepEqual(logLevelLines(logger), [
    'Candidate "pod-a" stopped leading MemoryLock memory: stopped.',
    'Candidate "pod-b" acquired MemoryLock memory and started leading (term 1).',
  ]);
  // The routine details are still there, at debug level.
  assert.equal(logger.matching('debug', 'released MemoryLock memory').length, 1);
  assert.equal(logger.matching('debug', 'New leader of MemoryLock memory: "pod-b"').length, 1);
  assert.match(
    logger.matching('debug', 'InvoiceJobs.closeInvoices missed')[0] ?? '',
    /catchUp 'skip': running none late; 1 skipped by the policy/,
  );
  assert.equal(b.app.get(InvoiceJobs).runs, 0, "'skip' runs no missed slot");
});
