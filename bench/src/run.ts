/**
 * `pnpm bench [name…] [--rounds N] [--seconds N] [--time-ms N] [--repeats N] [--quick]`: runs
 * the named benchmarks (when none is named: all but `compare`), one after another; each writes
 * `bench/results/<name>.json` and prints a summary.
 */
import { parseArgs } from 'node:util';
import { apiLoadBench } from './api-load.bench.js';
import { badDeployBench } from './bad-deploy.bench.js';
import { compareBench } from './compare.bench.js';
import { failoverBench } from './failover.bench.js';
import { fileHandoverBench } from './file-handover.bench.js';
import { gateHttpBench } from './gate-http.bench.js';
import { gateBench } from './gate.bench.js';
import { ghostsBench } from './ghosts.bench.js';
import { handoffBench } from './handoff.bench.js';
import { importCostBench } from './import-cost.bench.js';
import { rolloutBench } from './rollout.bench.js';
import { rssBench } from './rss.bench.js';
import { shardsBench } from './shards.bench.js';
import type { Benchmark, BenchSettings } from './support/benchmark.js';

const BENCHMARKS: readonly Benchmark[] = [
  failoverBench,
  fileHandoverBench,
  handoffBench,
  apiLoadBench,
  gateBench,
  gateHttpBench,
  importCostBench,
  rssBench,
  compareBench,
  rolloutBench,
  shardsBench,
  badDeployBench,
  ghostsBench,
];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '60' },
    'time-ms': { type: 'string', default: '1000' },
    repeats: { type: 'string', default: '3' },
    quick: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log(
    [
      'usage: pnpm bench [name…] [options]   (no name: all but compare)',
      '',
      ...BENCHMARKS.map((b) => `  ${b.name.padEnd(10)} ${b.description}`),
      '',
      '  --rounds N    failover, file-handover, handoff: handovers per scenario; rollout: rollouts per case; ghosts: handovers per case (9 cases);',
      '                import-cost, rss: processes per scenario;',
      '                gate-http: A/B rounds of 2 × 5 s (default 10)',
      '  --seconds N   api-load, shards: steady-state window in seconds (default 60)',
      '  --time-ms N   gate: sampling time per task and repeat in ms (default 1000)',
      '  --repeats N   gate: runs of the whole task set (default 3)',
      '  --quick       compare: fewer rounds and shorter windows, for development',
    ].join('\n'),
  );
  process.exit(0);
}

const FLAGS: Record<keyof BenchSettings, string> = {
  rounds: 'rounds',
  seconds: 'seconds',
  timeMs: 'time-ms',
  repeats: 'repeats',
  quick: 'quick',
};

const settings: BenchSettings = {
  rounds: positiveInteger('rounds', values.rounds),
  seconds: positiveInteger('seconds', values.seconds),
  timeMs: positiveInteger('time-ms', values['time-ms']),
  repeats: positiveInteger('repeats', values.repeats),
  quick: values.quick,
};
const unknown = positionals.filter((name) => !BENCHMARKS.some((b) => b.name === name));
if (unknown.length > 0) {
  console.error(
    `unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`,
  );
  process.exit(2);
}
const selected =
  positionals.length === 0
    ? BENCHMARKS.filter((b) => b.inDefaultRun !== false)
    : BENCHMARKS.filter((b) => positionals.includes(b.name));

for (const benchmark of selected) {
  console.log(`# ${benchmark.name}: ${benchmark.description}`);
  const command = ['pnpm bench', benchmark.name, ...benchmark.settings.flatMap(flag)].join(' ');
  await benchmark.run(settings, command);
}

function flag(setting: keyof BenchSettings): string[] {
  const value = settings[setting];
  if (typeof value === 'boolean') return value ? [`--${FLAGS[setting]}`] : [];
  return [`--${FLAGS[setting]} ${value}`];
}

function positiveInteger(option: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) {
    console.error(`--${option} must be a positive integer, got "${value}"`);
    process.exit(2);
  }
  return n;
}
