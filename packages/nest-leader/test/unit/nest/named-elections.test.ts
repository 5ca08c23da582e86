import './support.js';
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { Inject, Injectable, type INestApplication, type Provider } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import {
  currentTerm,
  DuplicateElectionError,
  getElectionCallbacksToken,
  getElectionLockToken,
  getElectionOptionsToken,
  getLeaderElectionToken,
  getLeaderElectorToken,
  InjectElection,
  InvalidLeaderElectionOptionError,
  LeaderElectionService,
  LeaderModule,
  type LeaderModuleOptions,
  LeaderModuleUsageError,
  LeaderOnly,
  LeaderOnlyBindingConflictError,
  type LeaderCallbacks,
  type LeaderTerm,
  OnLeaderChanged,
  OnLeadershipAcquired,
  OnLeadershipLost,
  type RegisterElectionOptions,
  type ResolvedElectionOptions,
  UnknownElectionError,
} from 'nest-leader';
import { LeaderElector } from 'nest-leader/core';
import { ManualClock, MemoryLock, RecordingLogger } from 'nest-leader/testing';
import { deferred, holdLeaseAs, OTHER, SELF } from './support.js';

const SHARD = 'shard-a';

/** Leader-only work of two elections, counted per election. */
@Injectable()
class ShardedJobs {
  readonly runs = { default: 0, shard: 0 };
  readonly terms: {
    default?: LeaderTerm;
    shard?: LeaderTerm;
    shardSeenFromDefault?: LeaderTerm;
    defaultSeenFromShard?: LeaderTerm;
  } = {};

  @LeaderOnly()
  billing(): string {
    this.runs.default += 1;
    this.terms.default = currentTerm();
    this.terms.shardSeenFromDefault = currentTerm(SHARD);
    return 'billed';
  }

  @LeaderOnly(SHARD)
  reconcileShard(): string {
    this.runs.shard += 1;
    this.terms.shard = currentTerm(SHARD);
    this.terms.defaultSeenFromShard = currentTerm();
    return 'reconciled';
  }

  @LeaderOnly()
  billThenReconcile(): string | undefined {
    return this.reconcileShard();
  }

  @LeaderOnly({ election: SHARD, onFollower: ({ election, leader }) => `${election}:${leader}` })
  shardStatus(): string {
    return 'leading';
  }
}

/** Leadership events of both elections, in the order they arrived. */
@Injectable()
class EventLog {
  readonly events: string[] = [];

  @OnLeadershipAcquired()
  acquired(term: LeaderTerm): void {
    this.events.push(`default acquired ${term.leaseTransitions}`);
  }

  @OnLeadershipAcquired(SHARD)
  shardAcquired(term: LeaderTerm): void {
    this.events.push(`${SHARD} acquired ${term.leaseTransitions}`);
  }

  @OnLeadershipLost(SHARD)
  shardLost(term: LeaderTerm): void {
    this.events.push(`${SHARD} lost ${term.leaseTransitions} aborted=${term.signal.aborted}`);
  }

  @OnLeaderChanged(SHARD)
  shardChanged(identity: string): void {
    this.events.push(`${SHARD} changed ${identity}`);
  }
}

@Injectable()
class ShardStatus {
  constructor(
    @InjectElection(SHARD) readonly shard: LeaderElectionService,
    @InjectElection() readonly main: LeaderElectionService,
  ) {}
}

interface App {
  app: INestApplication;
  clock: ManualClock;
  defaultLock: MemoryLock;
  shardLock: MemoryLock;
  logger: RecordingLogger;
}

interface AppOptions {
  providers?: Provider[];
  root?: Partial<LeaderModuleOptions>;
  shard?: Partial<RegisterElectionOptions>;
  /** `follower`: OTHER holds the shard's Lease before the app starts. */
  shardRole?: 'leader' | 'follower';
  clock?: ManualClock;
  defaultLock?: MemoryLock;
  shardLock?: MemoryLock;
}

/** One application with the default election and `shard-a`, each on its own MemoryLock. */
async function startApp(options: AppOptions = {}): Promise<App> {
  const clock = options.clock ?? new ManualClock();
  const defaultLock = options.defaultLock ?? new MemoryLock({ name: 'default' });
  const shardLock = options.shardLock ?? new MemoryLock({ name: SHARD });
  if (options.shardRole === 'follower') holdLeaseAs(shardLock, clock, OTHER);
  const logger = new RecordingLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderModule.forRoot({
        leaseName: 'billing',
        identity: SELF,
        lock: defaultLock,
        clock,
        ...options.root,
      }),
      LeaderModule.registerElection({
        name: SHARD,
        leaseName: 'orders-shard-a',
        lock: shardLock,
        ...options.shard,
      }),
    ],
    providers: options.providers ?? [ShardedJobs, EventLog],
  })
    .setLogger(logger)
    .compile();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  await clock.settle();
  return { app, clock, defaultLock, shardLock, logger };
}

function election(app: INestApplication, name?: string): LeaderElectionService {
  return app.get<LeaderElectionService>(getLeaderElectionToken(name));
}

async function bootstrapError(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  assert.fail('bootstrap should have failed');
}

let running: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(running.map((app) => app.close()));
  running = [];
});

async function started(options?: AppOptions): Promise<App> {
  const app = await startApp(options);
  running.push(app.app);
  return app;
}

describe('named elections', () => {
  test('are independent: the default election leads while shard-a follows, each on its own Lease', async () => {
    const { app, defaultLock, shardLock } = await started({ shardRole: 'follower' });

    assert.equal(election(app).isLeader(), true);
    assert.equal(election(app, SHARD).isLeader(), false);
    assert.equal(election(app, SHARD).leader, OTHER);
    assert.equal(defaultLock.read()?.record.holderIdentity, SELF);
    assert.equal(shardLock.read()?.record.holderIdentity, OTHER);
  });

  test('@LeaderOnly routes by election name: default work runs, shard-a work is skipped on its follower', async () => {
    const { app } = await started({ shardRole: 'follower' });
    const jobs = app.get(ShardedJobs);

    assert.equal(jobs.billing(), 'billed');
    assert.equal(jobs.reconcileShard(), undefined);
    assert.equal(jobs.shardStatus(), `${SHARD}:${OTHER}`, 'onFollower sees the shard election');
    assert.deepEqual(jobs.runs, { default: 1, shard: 0 });
  });

  test('currentTerm(name) is the term of that election inside its invocations', async () => {
    const clock = new ManualClock();
    const shardLock = new MemoryLock({ name: SHARD });
    holdLeaseAs(shardLock, clock, OTHER, 4); // shard-a was led before, four transitions ago…
    shardLock.set({ ...shardLock.read()!.record, holderIdentity: '' }); // …and released
    const { app } = await started({ clock, shardLock });
    const jobs = app.get(ShardedJobs);

    jobs.billing();
    jobs.reconcileShard();
    assert.equal(jobs.terms.default?.leaseTransitions, 0);
    assert.equal(jobs.terms.shard?.leaseTransitions, 5);
    assert.equal(jobs.terms.shardSeenFromDefault, undefined, 'no shard-a term in default work');
    assert.equal(currentTerm(SHARD), undefined, 'nothing outside an invocation');
  });

  test("leader-only work of one election calling another's sees both terms", async () => {
    const { app } = await started();
    const jobs = app.get(ShardedJobs);

    assert.equal(jobs.billThenReconcile(), 'reconciled');
    assert.equal(jobs.terms.shard, election(app, SHARD).term);
    assert.equal(jobs.terms.defaultSeenFromShard, election(app).term);
  });

  test('@InjectElection(name) and getLeaderElectionToken(name) give each election its service', async () => {
    const { app } = await started({ providers: [ShardStatus], shardRole: 'follower' });
    const status = app.get(ShardStatus);

    assert.equal(status.shard.name, SHARD);
    assert.equal(status.main.name, 'default');
    assert.equal(status.main, app.get(LeaderElectionService));
    assert.equal(getLeaderElectionToken(), LeaderElectionService);
    assert.equal(status.shard, app.get(getLeaderElectionToken(SHARD)));
  });

  test('inherit the defaults of forRoot() (identity, timings) and override them', async () => {
    const { app } = await started({
      root: { identity: 'inherited-pod', retryPeriodSeconds: 3, shutdownGraceMs: 1_234 },
      shard: { renewDeadlineSeconds: 8 },
    });
    const shard = app.get<ResolvedElectionOptions>(getElectionOptionsToken(SHARD));

    assert.equal(shard.identity, 'inherited-pod');
    assert.deepEqual(shard.timings, {
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 8,
      retryPeriodSeconds: 3,
    });
    assert.equal(shard.shutdownGraceMs, 1_234);
  });

  test("never inherit forRoot()'s ResourceLock instance (one lock is one Lease)", async () => {
    const defaultLock = new MemoryLock({ name: 'default' });
    const moduleRef = await Test.createTestingModule({
      imports: [
        LeaderModule.forRoot({ leaseName: 'billing', identity: SELF, lock: defaultLock }),
        LeaderModule.registerElection({ name: SHARD, leaseName: 'orders-shard-a' }),
      ],
    }).compile();
    const shard = moduleRef.get<ResolvedElectionOptions>(getElectionOptionsToken(SHARD));
    assert.equal(shard.lock, 'auto');
    await moduleRef.close();
  });

  test('registerElectionAsync without useFactory, useClass or useExisting is a LeaderModuleUsageError naming the election', () => {
    assert.throws(
      () => LeaderModule.registerElectionAsync({ name: SHARD }),
      (error) =>
        error instanceof LeaderModuleUsageError &&
        error.message ===
          `LeaderModule.registerElectionAsync({ name: '${SHARD}' }) needs useFactory, useClass or useExisting.`,
    );
  });

  test('registerElectionAsync builds the options with imports, inject and useFactory, or useClass', async () => {
    @Injectable()
    class ShardConfig {
      createElectionOptions(name: string) {
        return { leaseName: `orders-${name}`, lock: 'memory' as const };
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        LeaderModule.forRoot({ leaseName: 'billing', lock: 'memory', clock: new ManualClock() }),
        LeaderModule.registerElectionAsync({
          name: SHARD,
          imports: [
            ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ SHARD_LEASE: 'x-a' })] }),
          ],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({
            leaseName: config.getOrThrow<string>('SHARD_LEASE'),
            lock: 'memory',
          }),
        }),
        LeaderModule.registerElectionAsync({ name: 'shard-b', useClass: ShardConfig }),
      ],
    }).compile();
    assert.equal(
      moduleRef.get<ResolvedElectionOptions>(getElectionOptionsToken(SHARD)).leaseName,
      'x-a',
    );
    assert.equal(
      moduleRef.get<ResolvedElectionOptions>(getElectionOptionsToken('shard-b')).leaseName,
      'orders-shard-b',
    );
    await moduleRef.close();
  });
});

describe('unknown and duplicate election names', () => {
  @Injectable()
  class Misnamed {
    @LeaderOnly('shard-typo')
    run(): void {}
  }

  @Injectable()
  class MisnamedListener {
    @OnLeadershipAcquired('shard-typo')
    acquired(): void {}
  }

  for (const [what, provider, method] of [
    ['@LeaderOnly', Misnamed, 'run'],
    ['@OnLeadershipAcquired', MisnamedListener, 'acquired'],
  ] as const) {
    test(`${what} with an unknown name fails at bootstrap naming the class, the method and the known elections`, async () => {
      const error = await bootstrapError(() => startApp({ providers: [provider] }));
      assert.ok(error instanceof UnknownElectionError);
      assert.equal(error.election, 'shard-typo');
      assert.deepEqual(error.knownElections, ['default', SHARD]);
      assert.match(
        error.message,
        new RegExp(
          `${provider.name}\\.${method}\\(\\) uses election "shard-typo".*"default", "${SHARD}"`,
        ),
      );
    });
  }

  test('two elections with one name fail when the application is created', async () => {
    const error = await bootstrapError(() =>
      Test.createTestingModule({
        imports: [
          LeaderModule.registerElection({ name: SHARD, leaseName: 'one', lock: 'memory' }),
          LeaderModule.registerElection({ name: SHARD, leaseName: 'two', lock: 'memory' }),
        ],
      }).compile(),
    );
    assert.ok(error instanceof DuplicateElectionError);
    assert.equal(error.election, SHARD);
  });

  test('a second forRoot() in one application fails instead of silently replacing the first', async () => {
    const error = await bootstrapError(() =>
      Test.createTestingModule({
        imports: [
          LeaderModule.forRoot({ leaseName: 'one', lock: 'memory' }),
          LeaderModule.forRoot({ leaseName: 'two', lock: 'memory' }),
        ],
      }).compile(),
    );
    assert.ok(error instanceof DuplicateElectionError);
    assert.equal(error.election, 'default');
  });

  test("'default' and empty names are refused at once", () => {
    for (const name of ['default', '']) {
      assert.throws(
        () => LeaderModule.registerElection({ name, leaseName: 'x' }),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError && error.option === 'name',
      );
    }
  });
});

describe('events per election', () => {
  test('a takeover of shard-a gives its handlers acquired → lost → changed; the default election hears nothing', async () => {
    const { app, clock, shardLock } = await started();
    const log = app.get(EventLog);

    holdLeaseAs(shardLock, clock, OTHER, 1); // another candidate takes shard-a over
    await clock.advance(2_000); // shard-a's next renewal finds it

    const of = (name: string) => log.events.filter((event) => event.startsWith(`${name} `));
    assert.deepEqual(of(SHARD), [
      `${SHARD} changed ${SELF}`,
      `${SHARD} acquired 0`,
      `${SHARD} lost 0 aborted=true`,
      `${SHARD} changed ${OTHER}`,
    ]);
    assert.deepEqual(of('default'), ['default acquired 0']);
    assert.equal(election(app).isLeader(), true);
    assert.equal(election(app, SHARD).isLeader(), false);
  });
});

describe('shutdown with several elections', () => {
  @Injectable()
  class SlowShardWork {
    readonly release = deferred();

    @LeaderOnly(SHARD)
    async work(): Promise<void> {
      await this.release.promise;
    }
  }

  test('each election drains its own work, then releases its own Lease, in parallel', async () => {
    const { app, clock, defaultLock, shardLock } = await startApp({ providers: [SlowShardWork] });
    const running = app.get(SlowShardWork).work();

    const closing = app.close();
    await clock.settle();
    assert.equal(defaultLock.read()?.record.holderIdentity, '', 'nothing to drain: released');
    assert.equal(shardLock.read()?.record.holderIdentity, SELF, 'held while its work runs');

    app.get(SlowShardWork).release.resolve();
    await running;
    await closing;
    assert.equal(shardLock.read()?.record.holderIdentity, '');
  });
});

describe('replacing parts of one election through Nest DI', () => {
  test('a lock provided under getElectionLockToken(name) (providers option) is the one elected on', async () => {
    const mine = new MemoryLock({ name: 'mine' });
    const { app, shardLock, logger } = await started({
      shard: { providers: [{ provide: getElectionLockToken(SHARD), useValue: mine }] },
    });

    assert.equal(election(app, SHARD).isLeader(), true);
    assert.equal(mine.read()?.record.holderIdentity, SELF);
    assert.equal(shardLock.read(), undefined, 'the lock option is not used');
    assert.ok(
      logger
        .messages()
        .some(
          (line) =>
            line.includes(`"${SHARD}" starting`) && line.includes('lock custom (MemoryLock mine)'),
        ),
    );
  });

  test('Test.overrideProvider(getElectionLockToken(name)) replaces the lock in tests', async () => {
    const mine = new MemoryLock({ name: 'mine' });
    const moduleRef = await Test.createTestingModule({
      imports: [LeaderModule.forRoot({ leaseName: 'billing', lock: 'kubernetes', identity: SELF })],
    })
      .overrideProvider(getElectionLockToken())
      .useValue(mine)
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    running.push(app);
    await app.init();

    await app.get(LeaderElectionService).waitForLeadership();
    assert.equal(mine.read()?.record.holderIdentity, SELF);
  });

  test('the whole elector can be built by the user under getLeaderElectorToken(name)', async () => {
    const mine = new MemoryLock({ name: 'custom-elector' });
    const built: string[] = [];
    const { app } = await started({
      shard: {
        providers: [
          {
            provide: getLeaderElectorToken(SHARD),
            inject: [getElectionOptionsToken(SHARD), getElectionCallbacksToken(SHARD)],
            useFactory: (options: ResolvedElectionOptions, callbacks: LeaderCallbacks) => {
              built.push(options.name);
              return new LeaderElector({
                lock: mine,
                identity: 'custom-identity',
                clock: options.clock,
                callbacks,
              });
            },
          },
        ],
      },
    });

    assert.deepEqual(built, [SHARD]);
    assert.equal(election(app, SHARD).identity, 'custom-identity');
    assert.equal(mine.read()?.record.holderIdentity, 'custom-identity');
    assert.equal(app.get(ShardedJobs).reconcileShard(), 'reconciled', 'its gate follows it');
  });
});

describe('invalid options of a named election', () => {
  const cases: [string, Partial<RegisterElectionOptions>, string, RegExp][] = [
    [
      'releaseOnShutdown (the elector calls it releaseOnStop)',
      { releaseOnShutdown: 'yes' as unknown as boolean },
      'releaseOnShutdown',
      /boolean/,
    ],
    ['leaseName', { leaseName: 'Orders_Shard' }, 'leaseName', /DNS-1123/],
    [
      'renewDeadlineSeconds',
      { leaseDurationSeconds: 5, renewDeadlineSeconds: 5 },
      'renewDeadlineSeconds',
      /less than leaseDurationSeconds/,
    ],
    ['shutdownGraceMs', { shutdownGraceMs: -1 }, 'shutdownGraceMs', /zero or more/],
    [
      'retryPeriodSeconds (set) against the default renewDeadlineSeconds',
      { retryPeriodSeconds: 9 },
      'retryPeriodSeconds',
      /less than renewDeadlineSeconds \(10\)/,
    ],
    [
      'an unknown option (leaseDuration)',
      { leaseDuration: 60 } as Partial<RegisterElectionOptions>,
      'leaseDuration',
      /not an option of LeaderModule\.registerElection; did you mean "leaseDurationSeconds"/,
    ],
  ];
  for (const [what, shard, option, rule] of cases) {
    test(`name the option as written (${what}) and the election`, async () => {
      const error = await bootstrapError(() => startApp({ shard }));
      assert.ok(error instanceof InvalidLeaderElectionOptionError, String(error));
      assert.equal(error.option, option);
      assert.equal(error.election, SHARD);
      assert.match(error.rule, rule);
      assert.match(error.message, new RegExp(`"${option}" of election "${SHARD}"`));
    });
  }

  test("the default election's releaseOnShutdown is named as written too", async () => {
    const error = await bootstrapError(() =>
      startApp({ root: { releaseOnShutdown: 1 as unknown as boolean } }),
    );
    assert.ok(error instanceof InvalidLeaderElectionOptionError);
    assert.equal(error.option, 'releaseOnShutdown');
    assert.equal(error.election, undefined);
  });
});

describe('several applications in one process', () => {
  test('each keeps its own elections for the same class', async () => {
    const clock = new ManualClock();
    const shardLock = new MemoryLock({ name: SHARD });
    const a = await started({ clock, shardLock });
    const b = await started({
      clock,
      shardLock,
      root: { identity: OTHER },
    });

    assert.equal(a.app.get(ShardedJobs).reconcileShard(), 'reconciled');
    assert.equal(b.app.get(ShardedJobs).reconcileShard(), undefined, 'b follows shard-a');
    assert.deepEqual(
      [a.app.get(ShardedJobs).runs.shard, b.app.get(ShardedJobs).runs.shard],
      [1, 0],
    );
  });

  test('one instance shared by two live applications is refused at bootstrap, not silently rebound', async () => {
    const shared = new ShardedJobs();
    const provider = { provide: ShardedJobs, useValue: shared };
    await started({ providers: [provider] });
    const error = await bootstrapError(() => startApp({ providers: [provider] }));
    assert.ok(error instanceof LeaderOnlyBindingConflictError);
    assert.equal(error.className, 'ShardedJobs');
  });
});

describe('an injected service of another module', () => {
  test('@InjectElection works in a provider declared after the elections', async () => {
    @Injectable()
    class UsesToken {
      constructor(@Inject(getLeaderElectionToken(SHARD)) readonly shard: LeaderElectionService) {}
    }
    const { app } = await started({ providers: [UsesToken] });
    assert.equal(app.get(UsesToken).shard.name, SHARD);
  });
});
