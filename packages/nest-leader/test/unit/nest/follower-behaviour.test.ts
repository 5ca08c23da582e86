import './support.js';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Controller, Get, Injectable, Scope } from '@nestjs/common';
import {
  ClientProxyFactory,
  EventPattern,
  MessagePattern,
  RpcException,
  Transport,
} from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { type FollowerContext, LeaderOnly, NotLeaderException } from 'nest-leader';
import { baseUrl, OTHER, type Replica, SELF, startReplica } from './support.js';

@Injectable()
class Work {
  readonly ran: string[] = [];

  @LeaderOnly()
  syncJob(): string {
    this.ran.push('syncJob');
    return 'done';
  }

  @LeaderOnly()
  async asyncJob(): Promise<string> {
    this.ran.push('asyncJob');
    return 'done';
  }

  @LeaderOnly({ onFollower: 'throw' })
  mustLead(): void {
    this.ran.push('mustLead');
  }

  @LeaderOnly({ onFollower: 'throw' })
  async mustLeadAsync(): Promise<void> {
    this.ran.push('mustLeadAsync');
  }

  @LeaderOnly({
    onFollower: (context: FollowerContext) => ({ redirectTo: context.leader, context }),
  })
  custom(id: number): unknown {
    this.ran.push(`custom ${id}`);
    return 'ran';
  }
}

@Controller('reservations')
class ReservationsController {
  @LeaderOnly()
  @Get()
  list(): string[] {
    return ['r1'];
  }

  @LeaderOnly()
  @MessagePattern('reserve')
  reserve(): string {
    return 'reserved';
  }

  @MessagePattern('release')
  @LeaderOnly()
  release(): string {
    return 'released';
  }

  @LeaderOnly()
  @EventPattern('reserved')
  onReserved(_data: unknown): void {}
}

@Controller({ path: 'per-request', scope: Scope.REQUEST })
class PerRequestController {
  @LeaderOnly()
  @Get()
  get(): string {
    return 'ran';
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a follower', () => {
  let follower: Replica;
  let work: Work;
  let port: number;
  before(async () => {
    follower = await startReplica({
      role: 'follower',
      listen: true,
      providers: [Work],
      controllers: [ReservationsController, PerRequestController],
    });
    work = follower.app.get(Work);
    port = await freePort();
    follower.app.connectMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    await follower.app.startAllMicroservices();
  });
  after(() => follower.app.close());

  test('knows the leader it is following', () => {
    assert.equal(follower.election.isLeader(), false);
    assert.equal(follower.election.leader, OTHER);
  });

  test('skips a plain sync method and returns undefined', () => {
    assert.equal(work.syncJob(), undefined);
    assert.ok(!work.ran.includes('syncJob'));
  });

  test('skips a plain async method and resolves undefined', async () => {
    const result = work.asyncJob();
    assert.ok(result instanceof Promise);
    assert.equal(await result, undefined);
    assert.ok(!work.ran.includes('asyncJob'));
  });

  test("with onFollower 'throw', throws NotLeaderException naming the leader", () => {
    assert.throws(
      () => work.mustLead(),
      (error: unknown) => error instanceof NotLeaderException && error.leader === OTHER,
    );
    assert.ok(!work.ran.includes('mustLead'));
  });

  test("with onFollower 'throw', an async method rejects instead of throwing", async () => {
    const result = work.mustLeadAsync();
    await assert.rejects(result, NotLeaderException);
  });

  test('with an onFollower function, returns what the function returns, given the call context', () => {
    const result = work.custom(7) as { redirectTo: string; context: FollowerContext };
    assert.equal(result.redirectTo, OTHER);
    assert.equal(result.context.instance, work);
    assert.equal(result.context.methodName, 'custom');
    assert.deepEqual(result.context.args, [7]);
    assert.equal(result.context.kind, 'other');
    assert.equal(result.context.identity, SELF);
    assert.ok(!work.ran.includes('custom 7'));
  });

  test('answers an HTTP route with 503, Retry-After in seconds and the leader in the JSON body', async () => {
    const response = await fetch(`${await baseUrl(follower.app)}/reservations`);
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '2');
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(await response.json(), {
      statusCode: 503,
      error: 'Service Unavailable',
      message: `This replica is not the leader; the leader is "${OTHER}".`,
      leader: OTHER,
      retryAfterSeconds: 2,
    });
  });

  test('gates request-scoped controllers too (bound by class)', async () => {
    const response = await fetch(`${await baseUrl(follower.app)}/per-request`);
    assert.equal(response.status, 503);
    assert.equal(((await response.json()) as { leader: string }).leader, OTHER);
  });

  test('rejects a message handler called directly with an RpcException', async () => {
    const controller = follower.app.get(ReservationsController);
    await assert.rejects(async () => controller.reserve(), RpcException);
    await assert.rejects(async () => controller.onReserved({}), RpcException);
  });

  test('answers microservice requests (@MessagePattern above or below) with an error reply naming the leader', async () => {
    const client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    try {
      for (const pattern of ['reserve', 'release']) {
        await assert.rejects(firstValueFrom(client.send(pattern, {})), {
          status: 'error',
          message: `This replica is not the leader; the leader is "${OTHER}".`,
          leader: OTHER,
          retryAfterSeconds: 2,
        });
      }
    } finally {
      await client.close();
    }
  });
});
