import './support.js';
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LeaderModule } from 'nest-leader';
import { ManualClock } from 'nest-leader/testing';
import { WatchHub } from '../core/watchable-memory-lock.fixture.js';
import { holdLeaseAs, LEASE_NAME, OTHER, SELF } from './support.js';

/** A follower replica whose lock can be watched; the Lease is held by OTHER. */
async function follower(watchLease: boolean | undefined) {
  const hub = new WatchHub();
  const clock = new ManualClock();
  holdLeaseAs(hub.store, clock, OTHER);
  const lock = hub.view();
  const options = watchLease === undefined ? {} : { watchLease };
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderModule.forRoot({ leaseName: LEASE_NAME, identity: SELF, lock, clock, ...options }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  await clock.advance(0);
  return { app, lock, clock };
}

describe('LeaderModule option watchLease', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  test('by default a follower watches a lock that can be watched, and stops reading it', async () => {
    const replica = await follower(undefined);
    app = replica.app;
    assert.equal(replica.lock.calls.watch, 1);
    const gets = replica.lock.calls.get;
    await replica.clock.advance(10_000);
    assert.equal(replica.lock.calls.get, gets, 'no reads while the watch is healthy');
  });

  test('watchLease: false polls instead (for proxies where watches misbehave)', async () => {
    const replica = await follower(false);
    app = replica.app;
    assert.equal(replica.lock.calls.watch, 0);
    const gets = replica.lock.calls.get;
    await replica.clock.advance(10_000);
    assert.ok(replica.lock.calls.get - gets >= 4, 'one read every retryPeriod (2 s)');
  });
});
