/**
 * `@LeaderOnly()` on a real HTTP route: requests/s of a gated GET route on the leader vs an
 * unguarded GET route with the same body, in one Nest application (Express), measured with
 * autocannon over loopback, the two routes interleaved (A/B, B/A, …) in several rounds.
 */
import 'reflect-metadata';
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Result } from 'autocannon';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { LeaderElectionService, LeaderModule, LeaderOnly } from 'nest-leader';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { writeResults } from './support/results.js';
import { median } from './support/stats.js';

/** Concurrent connections autocannon keeps open. */
const CONNECTIONS = 10;
/** Untimed warm-up per route before the first round, seconds. */
const WARMUP_SECONDS = 2;
/** Load per route and round, seconds. */
const SECONDS_PER_ROUTE = 5;
/** autocannon's command-line entry, run as its own process so it does not share the app's event loop. */
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const execFileAsync = promisify(execFile);

@Controller()
class GateHttpController {
  @Get('plain')
  plain(): { ok: boolean } {
    return { ok: true };
  }

  @LeaderOnly()
  @Get('gated')
  gated(): { ok: boolean } {
    return { ok: true };
  }
}

@Module({
  imports: [LeaderModule.forRoot({ leaseName: 'bench-gate-http', lock: 'memory' })],
  controllers: [GateHttpController],
})
class GateHttpModule {}

interface RoundFigures {
  round: number;
  /** Order the two routes ran in this round. */
  order: string[];
  plainRequestsPerSecond: number;
  gatedRequestsPerSecond: number;
  /** gated / plain within the round. */
  ratio: number;
}

export const gateHttpBench: Benchmark = {
  name: 'gate-http',
  description:
    '@LeaderOnly() GET route on the leader vs an unguarded route, same app, autocannon, req/s ratio',
  settings: ['rounds'],
  async run(settings: BenchSettings, command: string): Promise<void> {
    const app: INestApplication = await NestFactory.create(GateHttpModule, {
      logger: ['error', 'warn'],
    });
    try {
      await app.listen(0, '127.0.0.1');
      const { port } = app.getHttpServer().address() as AddressInfo;
      const election = app.get(LeaderElectionService);
      const term = await election.waitForLeadership({ signal: AbortSignal.timeout(5_000) });
      const base = `http://127.0.0.1:${port}`;
      for (const path of ['plain', 'gated']) {
        const res = await fetch(`${base}/${path}`);
        if (res.status !== 200) throw new Error(`GET /${path} answered ${res.status}, not 200`);
        await res.arrayBuffer();
        await load(`${base}/${path}`, WARMUP_SECONDS);
      }
      const rounds: RoundFigures[] = [];
      for (let round = 1; round <= settings.rounds; round++) {
        const order = round % 2 === 1 ? ['plain', 'gated'] : ['gated', 'plain'];
        const rps: Record<string, number> = {};
        for (const path of order) rps[path] = await load(`${base}/${path}`, SECONDS_PER_ROUTE);
        const figures = {
          round,
          order,
          plainRequestsPerSecond: Math.round(rps['plain']!),
          gatedRequestsPerSecond: Math.round(rps['gated']!),
          ratio: round3(rps['gated']! / rps['plain']!),
        };
        rounds.push(figures);
        process.stdout.write(
          `  round ${round}/${settings.rounds}: plain ${figures.plainRequestsPerSecond} req/s, ` +
            `gated ${figures.gatedRequestsPerSecond} req/s, ratio ${figures.ratio}\n`,
        );
      }
      if (term.signal.aborted || election.term !== term) {
        throw new Error(
          'leadership changed during the run: the gated route took the follower path',
        );
      }
      const ratios = rounds.map((r) => r.ratio);
      const plain = rounds.map((r) => r.plainRequestsPerSecond);
      const gated = rounds.map((r) => r.gatedRequestsPerSecond);
      const summaryFigures = {
        plainMedianRequestsPerSecond: Math.round(median(plain)),
        gatedMedianRequestsPerSecond: Math.round(median(gated)),
        ratioMedian: round3(median(ratios)),
        ratioMin: Math.min(...ratios),
        ratioMax: Math.max(...ratios),
        target: 0.98,
      };
      const summary = [
        `gate-http — ${settings.rounds} rounds × 2 routes × ${SECONDS_PER_ROUTE} s, ` +
          `${CONNECTIONS} connections, loopback`,
        `  plain route:       median ${summaryFigures.plainMedianRequestsPerSecond} req/s ` +
          `(${Math.min(...plain)}–${Math.max(...plain)})`,
        `  @LeaderOnly route: median ${summaryFigures.gatedMedianRequestsPerSecond} req/s ` +
          `(${Math.min(...gated)}–${Math.max(...gated)})`,
        `  ratio gated/plain: median ${summaryFigures.ratioMedian} ` +
          `(per round ${summaryFigures.ratioMin}–${summaryFigures.ratioMax}; target ≥ 0.98)`,
      ];
      const path = writeResults({
        benchmark: 'gate-http',
        measures:
          'requests/s of a @LeaderOnly() GET route on the leader vs an unguarded GET route ' +
          'with the same body, one Nest (Express) app, autocannon over loopback, interleaved',
        command,
        parameters: {
          rounds: settings.rounds,
          secondsPerRouteAndRound: SECONDS_PER_ROUTE,
          connections: CONNECTIONS,
          warmupSecondsPerRoute: WARMUP_SECONDS,
          lock: "'memory'",
          platform: '@nestjs/platform-express',
          client: 'autocannon CLI (--json) in a child process, one per route and round',
        },
        results: { rounds, summary: summaryFigures },
        summary,
      });
      console.log(summary.join('\n'));
      console.log(`  → ${path}`);
    } finally {
      await app.close();
    }
  },
};

/** Runs autocannon against `url` for `seconds`; mean requests/s of 2xx answers. */
async function load(url: string, seconds: number): Promise<number> {
  const { stdout } = await execFileAsync(
    process.execPath,
    [AUTOCANNON, '--json', '-c', String(CONNECTIONS), '-d', String(seconds), url],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const result = JSON.parse(stdout) as Result;
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return result.requests.total / (result.duration || seconds);
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
