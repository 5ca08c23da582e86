import './support.js';
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { Controller, Injectable } from '@nestjs/common';
import {
  type LeaderTerm,
  OnLeaderChanged,
  OnLeadershipAcquired,
  OnLeadershipLost,
} from 'nest-leader';
import { ManualClock, MemoryLock, RecordingLogger } from 'nest-leader/testing';
import { holdLeaseAs, OTHER, type Replica, SELF, startReplica } from './support.js';

@Injectable()
class LeadershipLog {
  readonly events: string[] = [];
  readonly terms: LeaderTerm[] = [];

  @OnLeadershipAcquired()
  acquired(term: LeaderTerm): void {
    this.terms.push(term);
    this.events.push(`acquired ${term.leaseTransitions}`);
  }

  @OnLeadershipLost()
  lost(term: LeaderTerm): void {
    this.events.push(`lost ${term.leaseTransitions} aborted=${term.signal.aborted}`);
  }

  @OnLeaderChanged()
  changed(identity: string): void {
    this.events.push(`changed ${identity}`);
  }
}

@Controller()
class ControllerListener {
  readonly acquired: number[] = [];

  @OnLeadershipAcquired()
  onAcquired(term: LeaderTerm): void {
    this.acquired.push(term.leaseTransitions);
  }
}

@Injectable()
class FailingListener {
  @OnLeadershipAcquired()
  acquired(): void {
    throw new Error('handler bug');
  }

  @OnLeadershipLost()
  async lost(): Promise<void> {
    throw new Error('async handler bug');
  }
}

let replica: Replica | undefined;
afterEach(() => replica?.app.close());

test('handlers on providers receive acquired (the term), then lost (the ended term), then changed (the new holder)', async () => {
  const clock = new ManualClock();
  const lock = new MemoryLock();
  replica = await startReplica({ role: 'leader', lock, clock, providers: [LeadershipLog] });
  const log = replica.app.get(LeadershipLog);
  await clock.settle();

  holdLeaseAs(lock, clock, OTHER, 1); // another candidate takes the Lease over
  await clock.advance(2_000); // our next renewal finds it

  assert.deepEqual(log.events, [
    `changed ${SELF}`,
    'acquired 0',
    'lost 0 aborted=true',
    `changed ${OTHER}`,
  ]);
  assert.ok(log.terms[0]?.signal.aborted, 'the term handed to acquired has ended');
  assert.equal(replica.election.isLeader(), false);
});

test('handlers on controllers are called too', async () => {
  replica = await startReplica({ role: 'leader', controllers: [ControllerListener] });
  await replica.clock.settle();
  assert.deepEqual(replica.app.get(ControllerListener).acquired, [0]);
});

test('a handler that throws or rejects is logged and the election carries on', async () => {
  const logger = new RecordingLogger();
  replica = await startReplica({ role: 'leader', providers: [FailingListener], logger });
  await replica.clock.settle();
  assert.ok(replica.election.isLeader());
  assert.ok(
    logger
      .messages()
      .some((line) => /acquired handler FailingListener\.acquired failed.*handler bug/.test(line)),
  );

  await replica.app.close();
  replica = undefined;
  assert.ok(
    logger
      .messages()
      .some((line) => /lost handler FailingListener\.lost failed.*async handler bug/.test(line)),
  );
});
