/**
 * The consumer apps of the packaging matrix, written the way `nest new` lays an app out
 * (package.json, tsconfig.json + tsconfig.build.json, src/main.ts, src/app.module.ts,
 * src/app.controller.ts and a spec), for each Nest line and HTTP platform:
 *
 * - Nest 11, CommonJS: the Nest 11 starter's TypeScript 5.7 config (`module: nodenext` in a
 *   package without `"type"`), Jest + ts-jest as the starter configures them, and the CommonJS
 *   majors of the optional Nest packages (`@nestjs/schedule` 6, `@nestjs/terminus` 11).
 * - Nest 12, ESM: `"type": "module"`, TypeScript 5.9, Vitest with unplugin-swc (decorator
 *   metadata), `@nestjs/schedule`/`@nestjs/terminus` 12.
 *
 * Dependencies come from the README's Install list plus the starter's packages; `nest-leader`
 * itself is not in package.json: the matrix installs the packed tarball into each app with
 * `npm install --no-save`. Each flavor's package-lock.json is committed under `lockfiles/`
 * (`node test/dist/consumers/update-lockfiles.js` regenerates them).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export type NestLine = 11 | 12;
export type Platform = 'express' | 'fastify';

/** One app: a Nest line (11 = CommonJS + Jest, 12 = ESM + Vitest) on one HTTP platform. */
export interface Flavor {
  name: string;
  nest: NestLine;
  platform: Platform;
}

export const FLAVORS: readonly Flavor[] = [
  { name: 'nest11-cjs-express', nest: 11, platform: 'express' },
  { name: 'nest11-cjs-fastify', nest: 11, platform: 'fastify' },
  { name: 'nest12-esm-express', nest: 12, platform: 'express' },
  { name: 'nest12-esm-fastify', nest: 12, platform: 'fastify' },
];

/** The packages the README's Install section names, with the range each Nest line gets. */
export const README_INSTALL: Record<NestLine, Record<string, string>> = {
  11: {
    '@kubernetes/client-node': '^2.0.1',
    '@nestjs/schedule': '^6.1.3',
    '@nestjs/terminus': '^11.1.1',
  },
  12: {
    '@kubernetes/client-node': '^2.0.1',
    '@nestjs/schedule': '^12.0.2',
    '@nestjs/terminus': '^12.1.0',
  },
};

/** What `nest new` puts in an app (trimmed to what the matrix runs: no CLI, linters). */
const STARTER: Record<
  NestLine,
  { dependencies: Record<string, string>; dev: Record<string, string> }
> = {
  11: {
    dependencies: {
      '@nestjs/common': '^11.2.10',
      '@nestjs/core': '^11.2.10',
      'reflect-metadata': '^0.2.2',
      rxjs: '^7.8.1',
    },
    dev: {
      '@nestjs/testing': '^11.2.6',
      '@types/jest': '^30.0.0',
      '@types/node': '^22.10.7',
      jest: '^30.0.0',
      'ts-jest': '^29.2.5',
      typescript: '~5.7.3',
    },
  },
  12: {
    dependencies: {
      '@nestjs/common': '^12.5.1',
      '@nestjs/core': '^12.5.1',
      'reflect-metadata': '^0.2.2',
      rxjs: '^7.8.2',
    },
    dev: {
      '@nestjs/testing': '^12.1.1',
      '@swc/core': '^1.16.22',
      '@types/node': '^24.0.0',
      typescript: '~5.9.3',
      'unplugin-swc': '^2.0.0',
      vitest: '^5.1.1',
    },
  },
};

const PLATFORM_PACKAGE: Record<NestLine, Record<Platform, [string, string]>> = {
  11: {
    express: ['@nestjs/platform-express', '^11.2.10'],
    fastify: ['@nestjs/platform-fastify', '^11.2.8'],
  },
  12: {
    express: ['@nestjs/platform-express', '^12.5.1'],
    fastify: ['@nestjs/platform-fastify', '^12.5.0'],
  },
};

const sorted = (record: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

/** The app's package.json (without nest-leader, which the matrix installs from the tarball). */
export function packageJson(flavor: Flavor): Record<string, unknown> {
  const [platformPackage, platformRange] = PLATFORM_PACKAGE[flavor.nest][flavor.platform];
  const starter = STARTER[flavor.nest];
  const esm = flavor.nest === 12;
  return {
    name: flavor.name,
    version: '0.0.1',
    private: true,
    ...(esm ? { type: 'module' } : {}),
    scripts: {
      build: 'tsc -p tsconfig.build.json',
      'start:prod': esm ? 'node dist/main.js' : 'node dist/main',
      test: esm ? 'vitest run' : 'jest',
    },
    dependencies: sorted({
      ...starter.dependencies,
      ...README_INSTALL[flavor.nest],
      [platformPackage]: platformRange,
    }),
    devDependencies: sorted(starter.dev),
    ...(esm
      ? {}
      : {
          jest: {
            moduleFileExtensions: ['js', 'json', 'ts'],
            rootDir: 'src',
            testRegex: '.*\\.spec\\.ts$',
            transform: { '^.+\\.(t|j)s$': 'ts-jest' },
            testEnvironment: 'node',
          },
        }),
  };
}

/** Writes the whole app into `dir` (package.json, tsconfigs, sources, spec). */
export function writeApp(dir: string, flavor: Flavor): void {
  const esm = flavor.nest === 12;
  const ext = esm ? '.js' : '';
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify(packageJson(flavor), null, 2)}\n`,
    'tsconfig.json': `${JSON.stringify(tsconfig(flavor), null, 2)}\n`,
    'tsconfig.build.json': `${JSON.stringify(
      {
        extends: './tsconfig.json',
        exclude: [
          'node_modules',
          'test',
          'dist',
          '**/*spec.ts',
          ...(esm ? ['vitest.config.ts'] : []),
        ],
      },
      null,
      2,
    )}\n`,
    'src/main.ts': mainTs(flavor, ext),
    'src/app.module.ts': appModuleTs(ext),
    'src/app.controller.ts': appControllerTs(),
    'src/app.controller.spec.ts': specTs(flavor, ext),
  };
  if (esm) files['vitest.config.ts'] = VITEST_CONFIG;
  else {
    files['tsconfig.node10.json'] = `${JSON.stringify(NODE10_TSCONFIG, null, 2)}\n`;
    files[LOCK_ERRORS_SPEC] = LOCK_ERRORS_SPEC_TS;
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

function tsconfig(flavor: Flavor): Record<string, unknown> {
  // The Nest 11 starter's config (TypeScript 5.7: nodenext in a CommonJS package).
  const compilerOptions: Record<string, unknown> = {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    resolvePackageJsonExports: true,
    esModuleInterop: true,
    isolatedModules: true,
    declaration: true,
    removeComments: true,
    emitDecoratorMetadata: true,
    experimentalDecorators: true,
    allowSyntheticDefaultImports: true,
    target: 'ES2023',
    sourceMap: true,
    outDir: './dist',
    baseUrl: './',
    incremental: true,
    skipLibCheck: true,
    strictNullChecks: true,
    forceConsistentCasingInFileNames: true,
    noImplicitAny: false,
    strictBindCallApply: false,
    noFallthroughCasesInSwitch: false,
  };
  if (flavor.nest === 12) {
    delete compilerOptions.baseUrl;
    compilerOptions.types = ['node', 'vitest/globals'];
  }
  return { compilerOptions };
}

/** The older starters' CommonJS config: `module: commonjs`, node10 resolution (typecheck only). */
const NODE10_TSCONFIG = {
  extends: './tsconfig.json',
  compilerOptions: {
    module: 'commonjs',
    moduleResolution: 'node10',
    resolvePackageJsonExports: false,
    noEmit: true,
    incremental: false,
    ignoreDeprecations: '5.0',
  },
  exclude: ['node_modules', 'dist', '**/*spec.ts'],
};

/** A Nest 12 app's `vitest.config.ts`, running the spec files `include` matches. */
export function vitestConfig(include: string[]): string {
  return `import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { globals: true, root: './', include: [${include.map((glob) => `'${glob}'`).join(', ')}] },
  // SWC compiles the specs with decorator metadata, which Nest's dependency injection needs.
  plugins: [swc.vite({ module: { type: 'es6' } })],
});
`;
}

const VITEST_CONFIG = vitestConfig(['src/**/*.spec.ts']);

/**
 * The Nest 11 (CommonJS + Jest) apps' second spec: `lock: 'kubernetes'` under Jest's CommonJS
 * runtime, which cannot load the ESM-only `@kubernetes/client-node` 2.x. Its test expects the
 * "installed, but ESM-only" explanation as the app is installed, and "Install it" when run
 * with `CLIENT_NODE=missing` in a copy of the app without the package (the matrix does both).
 */
export const LOCK_ERRORS_SPEC = 'src/lock-errors.spec.ts';

const LOCK_ERRORS_SPEC_TS = `import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { LeaderModule } from 'nest-leader';

describe("lock: 'kubernetes' under Jest's CommonJS runtime", () => {
  const missing = process.env.CLIENT_NODE === 'missing';

  beforeAll(() => {
    // A cluster to elect on (never contacted: loading the client fails first).
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'lock-errors-')), 'config');
    writeFileSync(kubeconfig, [
      'apiVersion: v1', 'kind: Config', 'current-context: local',
      'clusters: [{ name: local, cluster: { server: "https://127.0.0.1:9" } }]',
      'users: [{ name: local, user: { token: unused } }]',
      'contexts: [{ name: local, context: { cluster: local, user: local, namespace: default } }]',
    ].join('\\n'));
    process.env.KUBECONFIG = kubeconfig;
  });

  it(missing ? 'says to install a missing @kubernetes/client-node' : 'explains an installed but ESM-only @kubernetes/client-node', async () => {
    const start = async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [LeaderModule.forRoot({ leaseName: 'lock-errors', lock: 'kubernetes' })],
      }).compile();
      const app = moduleRef.createNestApplication();
      await app.init();
      await app.close();
    };
    const error: Error = await start().then(
      () => { throw new Error('the app started without @kubernetes/client-node'); },
      (thrown: Error) => thrown,
    );
    console.log(\`lock-errors: \${error.message}\`);
    if (missing) {
      expect(error.message).toContain('Install it');
      expect(error.message).not.toContain('ESM-only');
    } else {
      expect(error.message).toContain('is installed, but it is ESM-only');
      expect(error.message).toContain('NODE_OPTIONS=--experimental-vm-modules');
      expect(error.message).not.toContain('Install it');
    }
  });
});
`;

function mainTs(flavor: Flavor, ext: string): string {
  const fastify = flavor.platform === 'fastify';
  return `import { NestFactory } from '@nestjs/core';
${fastify ? "import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';\n" : ''}import { AppModule } from './app.module${ext}';

async function bootstrap() {
  const app = await NestFactory.create${fastify ? '<NestFastifyApplication>' : ''}(AppModule${fastify ? ', new FastifyAdapter()' : ''});
  // SIGTERM → drain leader-only work, then release the Lease.
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  console.log(\`LISTENING \${await app.getUrl()}\`);
}
bootstrap();
`;
}

function appModuleTs(ext: string): string {
  return `import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { LeaderHealthIndicator, LeaderModule } from 'nest-leader';
import { AppController, Ticks } from './app.controller${ext}';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    TerminusModule,
    LeaderModule.forRoot({
      leaseName: process.env.LEASE_NAME ?? 'consumer-app',
      lock: (process.env.LEADER_LOCK as 'file' | 'memory' | undefined) ?? 'file',
      leaseDurationSeconds: 4,
      renewDeadlineSeconds: 3,
      retryPeriodSeconds: 1,
    }),
  ],
  controllers: [AppController],
  providers: [Ticks, LeaderHealthIndicator],
})
export class AppModule {}
`;
}

function appControllerTs(): string {
  return `import { Controller, Get, Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { LeaderElectionService, LeaderHealthIndicator, LeaderOnly } from 'nest-leader';

@Injectable()
export class Ticks {
  count = 0;

  @LeaderOnly()
  @Interval(200)
  tick(): void {
    this.count += 1;
  }
}

@Controller()
export class AppController {
  constructor(
    private readonly election: LeaderElectionService,
    private readonly ticks: Ticks,
    private readonly health: HealthCheckService,
    private readonly leaderHealth: LeaderHealthIndicator,
  ) {}

  @Get('role')
  role() {
    return {
      identity: this.election.identity,
      leader: this.election.isLeader(),
      ticks: this.ticks.count,
    };
  }

  @Get('work')
  @LeaderOnly()
  work() {
    return { identity: this.election.identity };
  }

  @Get('healthz')
  @HealthCheck()
  healthz() {
    return this.health.check([() => this.leaderHealth.isHealthy()]);
  }
}
`;
}

function specTs(flavor: Flavor, ext: string): string {
  const fastify = flavor.platform === 'fastify';
  const vitest = flavor.nest === 12;
  return `${vitest ? "import { describe, expect, it } from 'vitest';\n" : ''}import { Test } from '@nestjs/testing';
${fastify ? "import { FastifyAdapter } from '@nestjs/platform-fastify';\n" : ''}import { LeaderElectionService } from 'nest-leader';
import { AppController } from './app.controller${ext}';
import { AppModule } from './app.module${ext}';

describe('AppController', () => {
  it('leads alone on a memory lock and runs leader-only work', async () => {
    process.env.LEADER_LOCK = 'memory';
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication(${fastify ? 'new FastifyAdapter()' : ''});
    await app.init();
    try {
      const election = app.get(LeaderElectionService);
      await election.waitForLeadership();
      expect(app.get(AppController).work()).toEqual({ identity: election.identity });
    } finally {
      await app.close();
    }
  });
});
`;
}
