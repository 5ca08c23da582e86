import './support.js';
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { type ElectionObserver, getElectionObserverToken, LeaderModule } from 'nest-leader';
import { noopElectionObserver } from 'nest-leader/core';
import { ManualClock, MemoryLock } from 'nest-leader/testing';
import { holdLeaseAs, OTHER, SELF } from './support.js';

/** Records which election each observation came from. */
@Injectable()
class RecordingObserver implements ElectionObserver {
  readonly calls: string[] = [];

  termStarted(event: { election: string; identity: string }): void {
    this.calls.push(`termStarted ${event.election} ${event.identity}`);
  }

  leaderObserved(event: { election: string; holderIdentity: string }): void {
    this.calls.push(`leaderObserved ${event.election} ${event.holderIdentity}`);
  }
}

let app: INestApplication | undefined;
afterEach(() => app?.close());

test("each election's observer is replaceable through DI and receives that election's name ('default' for forRoot's)", async () => {
  const clock = new ManualClock();
  const shardLock = new MemoryLock({ name: 'shard-a' });
  holdLeaseAs(shardLock, clock, OTHER);
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderModule.forRoot({
        leaseName: 'billing',
        identity: SELF,
        lock: new MemoryLock(),
        clock,
        providers: [
          RecordingObserver,
          { provide: getElectionObserverToken(), useExisting: RecordingObserver },
        ],
      }),
      LeaderModule.registerElection({ name: 'shard-a', leaseName: 'shard-a', lock: shardLock }),
    ],
  })
    .overrideProvider(getElectionObserverToken('shard-a'))
    .useValue(new RecordingObserver())
    .compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  await clock.settle();

  const defaultObserver = app.get(RecordingObserver);
  const shardObserver = app.get<RecordingObserver>(getElectionObserverToken('shard-a'));
  assert.deepEqual(defaultObserver.calls, [
    `leaderObserved default ${SELF}`,
    `termStarted default ${SELF}`,
  ]);
  assert.deepEqual(shardObserver.calls, [`leaderObserved shard-a ${OTHER}`]);
});

test('by default an election observes nothing (noopElectionObserver)', async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderModule.forRoot({ leaseName: 'billing', lock: 'memory', clock: new ManualClock() }),
    ],
  }).compile();
  assert.equal(moduleRef.get(getElectionObserverToken()), noopElectionObserver);
  await moduleRef.close();
});
