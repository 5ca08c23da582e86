/**
 * The silent mistakes of a Nest set-up are reported at bootstrap, each naming its fix.
 */
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { afterEach, describe, mock, test } from 'node:test';
import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import {
  LeaderHealthIndicator,
  LeaderModuleNotImportedError,
  LeaderModuleUsageError,
  LeaderOnly,
  LeaderOnlyInstanceNotProvidedError,
  OnLeadershipAcquired,
} from 'nest-leader';
import { RecordingLogger } from 'nest-leader/testing';
import { type Replica, startReplica } from './support.js';

@Injectable()
class Jobs {
  runs = 0;

  @LeaderOnly()
  @Interval(60_000)
  tick(): void {
    this.runs += 1;
  }
}

const replicas: Replica[] = [];
afterEach(async () => {
  mock.timers.reset();
  for (const replica of replicas.splice(0)) await replica.app.close();
});

async function replica(options: Parameters<typeof startReplica>[0]): Promise<Replica> {
  const started = await startReplica(options);
  replicas.push(started);
  return started;
}

describe('bootstrap warnings', () => {
  test('@LeaderOnly() jobs without ScheduleModule.forRoot(): warns, naming the jobs and the fix', async () => {
    const logger = new RecordingLogger();
    await replica({ role: 'leader', providers: [Jobs], logger });

    const [warning] = logger.messages('warn').filter((m) => m.includes('ScheduleModule'));
    assert.match(warning!, /Jobs\.tick\(\) has @Cron\/@Interval\/@Timeout and @LeaderOnly\(\)/);
    assert.match(warning!, /Import ScheduleModule\.forRoot\(\)/);
  });

  test('with ScheduleModule.forRoot() there is no such warning', async () => {
    const logger = new RecordingLogger();
    await replica({
      role: 'leader',
      imports: [ScheduleModule.forRoot()],
      providers: [Jobs],
      logger,
    });

    assert.deepEqual(
      logger.messages('warn').filter((m) => m.includes('ScheduleModule')),
      [],
    );
  });

  test('no SIGTERM handler 5 s after start: warns to call app.enableShutdownHooks()', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const logger = new RecordingLogger();
    const saved = process.listeners('SIGTERM');
    process.removeAllListeners('SIGTERM');
    try {
      await replica({ role: 'leader', logger });
      mock.timers.tick(5_000);
    } finally {
      for (const listener of saved) process.on('SIGTERM', listener);
    }

    const [warning] = logger.messages('warn').filter((m) => m.includes('SIGTERM'));
    assert.match(warning!, /call app\.enableShutdownHooks\(\) in main\.ts/);
  });

  test('with a SIGTERM handler (enableShutdownHooks) there is no such warning', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const logger = new RecordingLogger();
    const started = await replica({ role: 'leader', logger });
    started.app.enableShutdownHooks();
    mock.timers.tick(5_000);

    assert.deepEqual(
      logger.messages('warn').filter((m) => m.includes('SIGTERM')),
      [],
    );
  });

  test('a @LeaderOnly() job on a class no module provides: one warning naming the class and the fix', async () => {
    @Injectable()
    class ForgottenJobs {
      @LeaderOnly()
      @Interval(60_000)
      closeInvoices(): void {}
    }
    const logger = new RecordingLogger();
    const secondLogger = new RecordingLogger();
    await replica({ role: 'leader', imports: [ScheduleModule.forRoot()], logger });
    await replica({ role: 'leader', imports: [ScheduleModule.forRoot()], logger: secondLogger });

    const warnings = logger.messages('warn').filter((m) => m.startsWith('ForgottenJobs '));
    assert.deepEqual(warnings, [
      'ForgottenJobs has methods that run only when Nest creates it ' +
        '(ForgottenJobs.closeInvoices() (@LeaderOnly() @Cron/@Interval/@Timeout)), but no module ' +
        'of this application provides it, so they never run on any replica. Add ForgottenJobs ' +
        "to a module's providers (controllers, for a controller).",
    ]);
    assert.deepEqual(
      secondLogger.messages('warn').filter((m) => m.includes('ForgottenJobs')),
      [],
      'once per class and process',
    );
    void ForgottenJobs; // declared, never provided: the point of the test
  });

  test('an @OnEvent handler written above @LeaderOnly() and a leadership event handler, on a class no module provides: warned too', async () => {
    @Injectable()
    class ForgottenListener {
      @OnEvent('invoice.created')
      @LeaderOnly()
      notify(): void {}

      @LeaderOnly()
      plain(): void {}

      @OnLeadershipAcquired()
      acquired(): void {}
    }
    const logger = new RecordingLogger();
    await replica({ role: 'leader', logger });

    assert.deepEqual(logger.matching('warn', 'ForgottenListener has'), [
      'ForgottenListener has methods that run only when Nest creates it ' +
        '(ForgottenListener.notify() (@LeaderOnly() @OnEvent), ForgottenListener.acquired() ' +
        '(leadership event handler)), but no module of this application provides it, so they ' +
        "never run on any replica. Add ForgottenListener to a module's providers (controllers, " +
        'for a controller).',
    ]);
    void ForgottenListener;
  });

  test('a class no module provides whose @LeaderOnly() methods are only called by code: no warning (a call would say it)', async () => {
    @Injectable()
    class CalledByHand {
      @LeaderOnly()
      reconcile(): void {}
    }
    const logger = new RecordingLogger();
    await replica({ role: 'leader', logger });

    assert.deepEqual(logger.matching('warn', 'CalledByHand'), []);
    void CalledByHand;
  });

  test('a provided @LeaderOnly() class, or a subclass of it, gets no such warning', async () => {
    @Injectable()
    class BaseJobs {
      @LeaderOnly()
      @Interval(60_000)
      tick(): void {}
    }
    @Injectable()
    class ShardJobs extends BaseJobs {}
    const logger = new RecordingLogger();
    await replica({
      role: 'leader',
      imports: [ScheduleModule.forRoot()],
      providers: [Jobs, ShardJobs],
      logger,
    });

    assert.deepEqual(
      logger.messages('warn').filter((m) => m.includes('no module of this application provides')),
      [],
    );
  });

  test('calling a @LeaderOnly() method on an instance Nest did not create: an error saying to add it to providers', async () => {
    @Injectable()
    class HandMade {
      @LeaderOnly()
      reconcile(): void {}
    }
    await replica({ role: 'leader' });

    assert.throws(
      () => new HandMade().reconcile(),
      (error: Error) => {
        assert.ok(error instanceof LeaderOnlyInstanceNotProvidedError);
        assert.ok(!(error instanceof LeaderModuleNotImportedError));
        assert.equal(
          error.message,
          '@LeaderOnly() HandMade.reconcile() was called on an instance Nest did not create, so ' +
            "no LeaderModule knows it: add HandMade to a module's providers (controllers, for a " +
            'controller), and get the instance from Nest (inject it, or app.get(HandMade)) ' +
            'instead of `new`.',
        );
        return true;
      },
    );
  });

  test('with no LeaderModule running, the same call says to import LeaderModule', () => {
    @Injectable()
    class HandMade {
      @LeaderOnly()
      reconcile(): void {}
    }

    assert.throws(
      () => new HandMade().reconcile(),
      (error: Error) => {
        assert.ok(error instanceof LeaderModuleNotImportedError);
        assert.match(error.message, /import LeaderModule\.forRoot\(\) in the root module/);
        return true;
      },
    );
  });

  test('@LeaderOnly() on a static method: a LeaderModuleUsageError when the class is declared', () => {
    assert.throws(
      () => {
        class Maintenance {
          @LeaderOnly()
          static vacuum(): void {}
        }
        return Maintenance;
      },
      (error: Error) => {
        assert.ok(error instanceof LeaderModuleUsageError);
        assert.equal(
          error.message,
          '@LeaderOnly() cannot gate the static method Maintenance.vacuum(): LeaderModule binds ' +
            'the instances Nest creates, and a static method has none. Make it an instance ' +
            "method of a provider (add Maintenance to a module's providers).",
        );
        return true;
      },
    );
  });

  test('a static leadership event handler: a LeaderModuleUsageError when the class is declared', () => {
    assert.throws(
      () => {
        class Announcer {
          @OnLeadershipAcquired()
          static announce(): void {}
        }
        return Announcer;
      },
      (error: Error) => {
        assert.ok(error instanceof LeaderModuleUsageError);
        assert.equal(
          error.message,
          'A leadership event handler cannot be static (Announcer.announce()): handlers are ' +
            'found on the instances Nest creates. Make it an instance method of a provider.',
        );
        return true;
      },
    );
  });

  test('LeaderHealthIndicator without LeaderModule: an error saying what to import', async () => {
    const compiling = Test.createTestingModule({ providers: [LeaderHealthIndicator] }).compile();

    await assert.rejects(
      compiling,
      /LeaderHealthIndicator needs LeaderModule: import LeaderModule\.forRoot\(\)/,
    );
  });

  test('a @LeaderOnly() class without LeaderModule fails at bootstrap without claiming a call', async () => {
    const moduleRef = await Test.createTestingModule({ providers: [Jobs] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });

    await assert.rejects(app.init(), (error: Error) => {
      assert.match(
        error.message,
        /Jobs has a @LeaderOnly\(\) method tick\(\), but no LeaderModule/,
      );
      assert.doesNotMatch(error.message, /was called/);
      return true;
    });
    await app.close();
  });

  test('a skipped job is logged once per follower stretch, not on every tick', async () => {
    const logger = new RecordingLogger();
    const follower = await replica({ role: 'follower', providers: [Jobs], logger });
    const jobs = follower.app.get(Jobs);

    jobs.tick();
    jobs.tick();
    jobs.tick();

    assert.equal(jobs.runs, 0);
    const skips = logger.messages('debug').filter((m) => m.startsWith('Skipped Jobs.tick()'));
    assert.equal(skips.length, 1, JSON.stringify(logger.messages('debug')));
  });
});

@Controller()
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly leader: LeaderHealthIndicator,
  ) {}

  @Get('readyz')
  readiness() {
    return this.health.check([() => this.leader.isLeader()]);
  }
}

@Module({ imports: [TerminusModule], controllers: [HealthController] })
class HealthModule {}

describe('LeaderHealthIndicator, as LeaderModule provides it', () => {
  test('is injectable without being listed in any providers', async () => {
    const leader = await replica({ role: 'leader', imports: [HealthModule] });

    const result = await leader.app.get(HealthController).readiness();

    assert.equal(result.status, 'ok');
    assert.equal(result.info?.leader?.status, 'up');
  });

  test('works in a module without TerminusModule too (app.get)', async () => {
    const leader = await replica({ role: 'leader' });

    const result = leader.app.get(LeaderHealthIndicator).isLeader();

    assert.equal(result.leader.status, 'up');
  });
});
