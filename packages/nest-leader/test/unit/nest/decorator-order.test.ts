import './support.js';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Controller, Get, Injectable } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Cron, Interval, ScheduleModule, SchedulerRegistry, Timeout } from '@nestjs/schedule';
import { LeaderOnly } from 'nest-leader';
import { baseUrl, type Replica, startReplica } from './support.js';

const HOURLY = '0 0 * * * *';
const MINUTE_MS = 60_000;

// "above"/"below": where the other decorator is written relative to @LeaderOnly(). Decorators
// apply bottom-up, so "below" ones put metadata on the original method, "above" ones on the wrapper.
@Injectable()
class Jobs {
  readonly ran: string[] = [];

  @LeaderOnly()
  @Cron(HOURLY, { name: 'cron-below' })
  cronBelow(): void {
    this.ran.push('cron-below');
  }

  @Cron(HOURLY, { name: 'cron-above' })
  @LeaderOnly()
  cronAbove(): void {
    this.ran.push('cron-above');
  }

  @LeaderOnly()
  @Interval('interval-below', MINUTE_MS)
  intervalBelow(): void {
    this.ran.push('interval-below');
  }

  @Interval('interval-above', MINUTE_MS)
  @LeaderOnly()
  intervalAbove(): void {
    this.ran.push('interval-above');
  }

  @LeaderOnly()
  @Timeout('timeout-below', MINUTE_MS)
  timeoutBelow(): void {
    this.ran.push('timeout-below');
  }

  @Timeout('timeout-above', MINUTE_MS)
  @LeaderOnly()
  timeoutAbove(): void {
    this.ran.push('timeout-above');
  }

  @LeaderOnly()
  @OnEvent('event-below')
  onEventBelow(): void {
    this.ran.push('event-below');
  }

  @OnEvent('event-above')
  @LeaderOnly()
  onEventAbove(): void {
    this.ran.push('event-above');
  }
}

@Controller('orders')
class OrdersController {
  @LeaderOnly()
  @Get('below')
  below(): { ran: string } {
    return { ran: 'get-below' };
  }

  @Get('above')
  @LeaderOnly()
  above(): { ran: string } {
    return { ran: 'get-above' };
  }
}

function replica(role: 'leader' | 'follower'): Promise<Replica> {
  return startReplica({
    role,
    listen: true,
    imports: [ScheduleModule.forRoot(), EventEmitterModule.forRoot()],
    providers: [Jobs],
    controllers: [OrdersController],
  });
}

describe('@LeaderOnly() keeps other decorators working in either order', () => {
  let leader: Replica;
  let follower: Replica;
  before(async () => {
    leader = await replica('leader');
    follower = await replica('follower');
  });
  after(async () => {
    await leader.app.close();
    await follower.app.close();
  });

  for (const position of ['below', 'above'] as const) {
    describe(`other decorator written ${position} @LeaderOnly()`, () => {
      test('@Cron registers the job, which runs on the leader and is skipped on a follower', async () => {
        for (const { app } of [leader, follower]) {
          await app.get(SchedulerRegistry).getCronJob(`cron-${position}`).fireOnTick();
          await leader.clock.settle();
        }
        assert.ok(leader.app.get(Jobs).ran.includes(`cron-${position}`));
        assert.ok(!follower.app.get(Jobs).ran.includes(`cron-${position}`));
      });

      test('@Interval registers the interval, whose method is gated', () => {
        for (const { app } of [leader, follower]) {
          assert.ok(app.get(SchedulerRegistry).getIntervals().includes(`interval-${position}`));
        }
        const method = position === 'below' ? 'intervalBelow' : 'intervalAbove';
        leader.app.get(Jobs)[method]();
        follower.app.get(Jobs)[method]();
        assert.ok(leader.app.get(Jobs).ran.includes(`interval-${position}`));
        assert.ok(!follower.app.get(Jobs).ran.includes(`interval-${position}`));
      });

      test('@Timeout registers the timeout, whose method is gated', () => {
        for (const { app } of [leader, follower]) {
          assert.ok(app.get(SchedulerRegistry).getTimeouts().includes(`timeout-${position}`));
        }
        const method = position === 'below' ? 'timeoutBelow' : 'timeoutAbove';
        leader.app.get(Jobs)[method]();
        follower.app.get(Jobs)[method]();
        assert.ok(leader.app.get(Jobs).ran.includes(`timeout-${position}`));
        assert.ok(!follower.app.get(Jobs).ran.includes(`timeout-${position}`));
      });

      test('@OnEvent subscribes one listener, which runs on the leader and is skipped on a follower', async () => {
        for (const { app } of [leader, follower]) {
          const emitter = app.get(EventEmitter2);
          assert.equal(emitter.listenerCount(`event-${position}`), 1);
          emitter.emit(`event-${position}`);
        }
        await leader.clock.settle();
        assert.ok(leader.app.get(Jobs).ran.includes(`event-${position}`));
        assert.ok(!follower.app.get(Jobs).ran.includes(`event-${position}`));
      });

      test('@Get routes the request: 200 from the leader, 503 from a follower', async () => {
        const fromLeader = await fetch(`${await baseUrl(leader.app)}/orders/${position}`);
        const fromFollower = await fetch(`${await baseUrl(follower.app)}/orders/${position}`);
        assert.equal(fromLeader.status, 200);
        assert.deepEqual(await fromLeader.json(), { ran: `get-${position}` });
        assert.equal(fromFollower.status, 503);
        await fromFollower.arrayBuffer();
      });
    });
  }
});
