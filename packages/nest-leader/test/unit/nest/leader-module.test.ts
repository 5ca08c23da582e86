import './support.js';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { Injectable, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import {
  InvalidLeaderElectionOptionError,
  LeaderElectionService,
  LeaderModule,
  type LeaderModuleOptions,
  type LeaderModuleOptionsFactory,
} from 'nest-leader';
import { ManualClock, MemoryLock, RecordingLogger } from 'nest-leader/testing';
import { LEASE_NAME } from './support.js';

async function compile(
  leaderModule: ReturnType<typeof LeaderModule.forRoot>,
  logger?: RecordingLogger,
) {
  const moduleRef = Test.createTestingModule({ imports: [leaderModule] });
  if (logger) moduleRef.setLogger(logger);
  return moduleRef.compile();
}

async function bootstrapError(options: Partial<LeaderModuleOptions>): Promise<unknown> {
  try {
    await compile(LeaderModule.forRoot(options as LeaderModuleOptions));
  } catch (error) {
    return error;
  }
  assert.fail('bootstrap should have failed');
}

describe('forRootAsync', () => {
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  test('builds the options from ConfigService with imports, inject and useFactory', async () => {
    const lock = new MemoryLock();
    const moduleRef = await Test.createTestingModule({
      imports: [
        LeaderModule.forRootAsync({
          imports: [
            ConfigModule.forRoot({
              ignoreEnvFile: true,
              load: [() => ({ LEASE_NAME: 'from-config', POD_NAME: 'config-pod' })],
            }),
          ],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({
            leaseName: config.getOrThrow<string>('LEASE_NAME'),
            identity: config.getOrThrow<string>('POD_NAME'),
            lock,
            clock: new ManualClock(),
          }),
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();

    const term = await app.get(LeaderElectionService).waitForLeadership();
    assert.equal(term.leaseTransitions, 0);
    assert.equal(lock.read()?.record.holderIdentity, 'config-pod');
  });

  test('accepts useClass with a LeaderModuleOptionsFactory', async () => {
    const lock = new MemoryLock();
    @Injectable()
    class LeaderConfig implements LeaderModuleOptionsFactory {
      createLeaderOptions(): LeaderModuleOptions {
        return { leaseName: LEASE_NAME, identity: 'class-pod', lock, clock: new ManualClock() };
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [LeaderModule.forRootAsync({ useClass: LeaderConfig })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();

    await app.get(LeaderElectionService).waitForLeadership();
    assert.equal(lock.read()?.record.holderIdentity, 'class-pod');
  });
});

describe('invalid options fail at bootstrap, naming the option and the rule', () => {
  const cases: [string, Partial<LeaderModuleOptions>, string, RegExp][] = [
    ['a missing leaseName', {}, 'leaseName', /DNS-1123 subdomain/],
    [
      'a leaseName that is not a DNS-1123 subdomain',
      { leaseName: 'Billing_Worker' },
      'leaseName',
      /DNS-1123/,
    ],
    [
      'renewDeadlineSeconds not below leaseDurationSeconds',
      { leaseName: LEASE_NAME, leaseDurationSeconds: 10, renewDeadlineSeconds: 10 },
      'renewDeadlineSeconds',
      /less than leaseDurationSeconds/,
    ],
    [
      'a fractional leaseDurationSeconds',
      { leaseName: LEASE_NAME, leaseDurationSeconds: 15.5 },
      'leaseDurationSeconds',
      /whole number/,
    ],
    [
      'a negative shutdownGraceMs',
      { leaseName: LEASE_NAME, shutdownGraceMs: -1 },
      'shutdownGraceMs',
      /zero or more/,
    ],
    [
      'an unknown lock kind',
      { leaseName: LEASE_NAME, lock: 'redis' as 'file' },
      'lock',
      /'auto', 'kubernetes'/,
    ],
    [
      'an empty identity',
      { leaseName: LEASE_NAME, lock: 'memory', identity: '' },
      'identity',
      /non-empty/,
    ],
    [
      'an invalid namespace',
      { leaseName: LEASE_NAME, lock: 'memory', namespace: 'Billing' },
      'namespace',
      /DNS-1123 label/,
    ],
    [
      'an unknown option (leaseDuration: 60 would silently run with 15 s)',
      { leaseName: LEASE_NAME, lock: 'memory', leaseDuration: 60 } as Partial<LeaderModuleOptions>,
      'leaseDuration',
      /not an option of LeaderModule; did you mean "leaseDurationSeconds"\?/,
    ],
    [
      'releaseOnStop (the elector option) given to LeaderModule',
      {
        leaseName: LEASE_NAME,
        lock: 'memory',
        releaseOnStop: false,
      } as Partial<LeaderModuleOptions>,
      'releaseOnStop',
      /did you mean "releaseOnShutdown"/,
    ],
    [
      'handoffOnShutdown (the elector’s handoffOnStop) not a boolean: named as written',
      {
        leaseName: LEASE_NAME,
        lock: 'memory',
        handoffOnShutdown: 'yes',
      } as unknown as Partial<LeaderModuleOptions>,
      'handoffOnShutdown',
      /must be a boolean/,
    ],
    [
      'a podTemplateHash that is not a label value',
      { leaseName: LEASE_NAME, lock: 'memory', podTemplateHash: 'a b' },
      'podTemplateHash',
      /must be a label value/,
    ],
    [
      'retryPeriodSeconds 9 with the default renewDeadline',
      { leaseName: LEASE_NAME, lock: 'memory', retryPeriodSeconds: 9 },
      'retryPeriodSeconds',
      /less than renewDeadlineSeconds \(10\) \/ 1\.2 = 8\.3333/,
    ],
  ];
  for (const [name, options, option, rule] of cases) {
    test(name, async () => {
      const error = await bootstrapError({ clock: new ManualClock(), ...options });
      assert.ok(error instanceof InvalidLeaderElectionOptionError);
      assert.equal(error.option, option);
      assert.match(error.rule, rule);
      assert.match(error.message, new RegExp(option));
    });
  }
});

describe("lock selection with 'auto'", () => {
  const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
  beforeEach(() => {
    process.env.HOME = mkdtempSync(join(tmpdir(), 'nest-leader-home-')); // no ~/.kube/config
    delete process.env.KUBECONFIG;
  });
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  test('without any cluster configured, falls back to a FileLock and says so once', async () => {
    const logger = new RecordingLogger();
    await compile(
      LeaderModule.forRoot({ leaseName: 'auto-file', clock: new ManualClock() }),
      logger,
    );
    const fallback = logger
      .messages()
      .filter((line) => line.includes('No Kubernetes cluster configured'));
    assert.equal(fallback.length, 1);
    assert.match(fallback[0]!, /FileLock/);
  });

  test("with lock 'kubernetes' and no cluster configured, bootstrap fails naming the lock option", async () => {
    const error = await bootstrapError({ leaseName: LEASE_NAME, lock: 'kubernetes' });
    assert.ok(error instanceof InvalidLeaderElectionOptionError);
    assert.equal(error.option, 'lock');
    assert.match(error.rule, /needs a cluster/);
  });

  test('with KUBECONFIG set, uses a Kubernetes Lease in the context namespace', async () => {
    const kubeconfig = join(process.env.HOME!, 'kubeconfig.yaml');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u, namespace: billing } }]',
        'current-context: x',
      ].join('\n'),
    );
    process.env.KUBECONFIG = kubeconfig;
    const logger = new RecordingLogger();
    const moduleRef = await compile(
      LeaderModule.forRoot({
        leaseName: 'auto-lease',
        identity: 'pod-a',
        clock: new ManualClock(),
      }),
      logger,
    );
    const app = moduleRef.createNestApplication();
    await app.init();
    await app.close();
    const start = logger.messages().find((line) => line.startsWith('Leader election starting'));
    assert.match(
      start ?? '',
      /identity "pod-a", lock kubernetes \(Lease billing\/auto-lease\), namespace "billing"/,
    );
  });
});
