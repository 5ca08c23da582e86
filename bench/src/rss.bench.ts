/**
 * The resident memory a `LeaderModule` adds to a bare Nest application: in fresh Node processes
 * (`rss-child.js`), a Nest application context with an empty module vs the same with
 * `LeaderModule.forRoot()` on lock `'memory'` and on lock `'file'`, each leading; the scenarios
 * interleaved over several runs, medians reported.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { writeResults } from './support/results.js';
import { median } from './support/stats.js';

const execFileAsync = promisify(execFile);
const CHILD = fileURLToPath(new URL('./rss-child.js', import.meta.url));
const SCENARIOS = ['bare', 'memory', 'file'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Sample {
  rssBytes: number;
  heapUsedBytes: number;
}

export const rssBench: Benchmark = {
  name: 'rss',
  description: 'resident memory a LeaderModule (memory lock, file lock) adds to a bare Nest app',
  settings: ['rounds'],
  async run(settings: BenchSettings, command: string): Promise<void> {
    const samples: Record<Scenario, Sample[]> = { bare: [], memory: [], file: [] };
    for (let round = 1; round <= settings.rounds; round++) {
      // Rotate the order so no scenario always runs first (cold file cache) or last.
      const order = SCENARIOS.map((_, i) => SCENARIOS[(i + round) % SCENARIOS.length]!);
      for (const scenario of order) samples[scenario].push(await sample(scenario));
      process.stdout.write(`  round ${round}/${settings.rounds} done\n`);
    }
    const mb = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
    const bareRss = median(samples.bare.map((s) => s.rssBytes));
    const bareHeap = median(samples.bare.map((s) => s.heapUsedBytes));
    const figures = SCENARIOS.map((scenario) => {
      const rss = samples[scenario].map((s) => s.rssBytes);
      const heap = samples[scenario].map((s) => s.heapUsedBytes);
      return {
        scenario,
        rssMedianMB: mb(median(rss)),
        rssMinMB: mb(Math.min(...rss)),
        rssMaxMB: mb(Math.max(...rss)),
        heapUsedMedianMB: mb(median(heap)),
        addedRssMB: mb(median(rss) - bareRss),
        addedHeapUsedMB: mb(median(heap) - bareHeap),
        rssMBByRun: rss.map(mb),
      };
    });
    const summary = [
      `rss — ${settings.rounds} fresh processes per scenario, after leading + 500 ms + a full GC`,
      ...figures.map(
        (f) =>
          `  ${f.scenario.padEnd(7)} RSS median ${f.rssMedianMB} MB (${f.rssMinMB}–${f.rssMaxMB}), ` +
          `heap used ${f.heapUsedMedianMB} MB` +
          (f.scenario === 'bare'
            ? ''
            : `; adds ${f.addedRssMB} MB RSS, ${f.addedHeapUsedMB} MB heap`),
      ),
    ];
    const path = writeResults({
      benchmark: 'rss',
      measures:
        'process RSS and V8 heap used of a Nest application context, bare vs with ' +
        "LeaderModule.forRoot() (lock 'memory', lock 'file'), each in its own fresh process",
      command,
      parameters: {
        processesPerScenario: settings.rounds,
        measuredAfter: 'leadership (with a lock) + 500 ms + global.gc() (--expose-gc)',
        app: 'NestFactory.createApplicationContext, no HTTP adapter',
      },
      results: { scenarios: figures },
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`  → ${path}`);
  },
};

async function sample(scenario: Scenario): Promise<Sample> {
  const { stdout } = await execFileAsync(process.execPath, ['--expose-gc', CHILD, scenario], {
    timeout: 60_000,
  });
  const line = stdout.trim().split('\n').pop()!;
  return JSON.parse(line) as Sample;
}
