import 'reflect-metadata';
import assert from 'node:assert/strict';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LeaderElectionService, LeaderModule, LeaderOnly } from 'nest-leader';
import { ManualClock, MemoryLock } from 'nest-leader/testing';

@Injectable()
class Jobs {
  runs = 0;

  @LeaderOnly()
  run(): void {
    this.runs += 1;
  }
}

/** Two replicas in one process share a MemoryLock; time moves only when the test says so. */
export async function twoReplicas(): Promise<void> {
  const lock = new MemoryLock();
  const clock = new ManualClock();
  const replica = async (identity: string) => {
    const moduleRef = await Test.createTestingModule({
      imports: [LeaderModule.forRoot({ leaseName: 'jobs', identity, lock, clock })],
      providers: [Jobs],
    }).compile();
    return moduleRef.createNestApplication().init();
  };

  const a = await replica('pod-a');
  await a.get(LeaderElectionService).waitForLeadership();
  const b = await replica('pod-b');
  await clock.settle();

  a.get(Jobs).run(); // runs: pod-a leads
  b.get(Jobs).run(); // skipped: pod-b follows
  assert.deepEqual([a.get(Jobs).runs, b.get(Jobs).runs], [1, 0]);

  await a.close(); // drains, then releases the Lease
  await clock.advance(5_000); // pod-b's next attempt finds it free
  b.get(Jobs).run(); // runs now
  assert.equal(b.get(Jobs).runs, 1);
  await b.close();
}
