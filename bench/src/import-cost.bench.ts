/**
 * What importing nest-leader costs an application at startup: wall time of the `import()` and
 * the process's resident memory afterwards, each measured in a fresh Node process, and whether
 * `@kubernetes/client-node` was loaded (recorded by a `module.registerHooks` resolve hook).
 *
 * `NEST_LEADER_ENTRY=/other/checkout/packages/nest-leader/dist/index.js` measures another build
 * (e.g. before a change) for the `import` scenario only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { writeResults } from './support/results.js';
import { median } from './support/stats.js';

interface Scenario {
  name: string;
  description: string;
  /** Module body run after the hooks are registered; sets `loadedMs` start/end itself. */
  body: (entry: string, kubeconfig: string) => string;
}

const SCENARIOS: readonly Scenario[] = [
  { name: 'node', description: 'an empty Node process (baseline)', body: () => '' },
  {
    name: 'nest',
    description: "import '@nestjs/common' and '@nestjs/core' (what any Nest app pays)",
    body: () => `await import('@nestjs/common'); await import('@nestjs/core');`,
  },
  {
    name: 'client-node',
    description: "import '@kubernetes/client-node' alone",
    body: () => `await import('@kubernetes/client-node');`,
  },
  {
    name: 'import',
    description: "import 'nest-leader'",
    body: (entry) => `await import(${JSON.stringify(entry)});`,
  },
  {
    name: 'file-lock',
    description: "import 'nest-leader' and select lock 'file'",
    body: (entry) =>
      `const { selectLock } = await import(${JSON.stringify(entry)});
       selectLock({ leaseName: 'bench', lock: 'file' });`,
  },
  {
    name: 'lease-lock',
    description: "import 'nest-leader' and select a Kubernetes Lease (kubeConfig path)",
    body: (entry, kubeconfig) =>
      `const { selectLock } = await import(${JSON.stringify(entry)});
       selectLock({ leaseName: 'bench', kubeConfig: ${JSON.stringify(kubeconfig)} });`,
  },
];

interface Sample {
  ms: number;
  rssMB: number;
  clientNodeLoaded: boolean;
}

const BENCH_DIR = fileURLToPath(new URL('../', import.meta.url));

function measure(body: string): Sample {
  const script = `
    import { registerHooks } from 'node:module';
    const urls = [];
    registerHooks({ resolve: (specifier, context, next) => {
      const result = next(specifier, context);
      urls.push(result.url);
      return result;
    } });
    const start = performance.now();
    ${body}
    const ms = performance.now() - start;
    console.log(JSON.stringify({
      ms,
      rssMB: process.memoryUsage().rss / 2 ** 20,
      clientNodeLoaded: urls.some((url) => url.includes('/@kubernetes/client-node/')),
    }));
  `;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: BENCH_DIR,
    encoding: 'utf8',
    env: { ...process.env, KUBECONFIG: '' },
  });
  return JSON.parse(output.trim().split('\n').at(-1)!) as Sample;
}

export const importCostBench: Benchmark = {
  name: 'import-cost',
  description: 'startup cost of importing nest-leader (ms, RSS) and whether client-node loads',
  settings: ['rounds'],
  async run(settings: BenchSettings, command: string): Promise<void> {
    const override = process.env.NEST_LEADER_ENTRY;
    const entry = override ? pathToFileURL(override).href : 'nest-leader';
    const dir = mkdtempSync(join(tmpdir(), 'nest-leader-import-cost-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(
      kubeconfig,
      [
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
      ].join('\n'),
    );
    const scenarios = override ? SCENARIOS.filter((s) => s.name === 'import') : SCENARIOS;
    const results: Record<string, unknown> = {};
    const summary: string[] = [];
    try {
      for (const scenario of scenarios) {
        const samples: Sample[] = [];
        for (let round = 0; round < settings.rounds; round++) {
          samples.push(measure(scenario.body(entry, kubeconfig)));
        }
        const medianMs = Math.round(median(samples.map((s) => s.ms)));
        const medianRssMB = Math.round(median(samples.map((s) => s.rssMB)));
        const clientNodeLoaded = samples.every((s) => s.clientNodeLoaded);
        results[scenario.name] = {
          description: scenario.description,
          medianMs,
          medianRssMB,
          clientNodeLoaded,
          samples,
        };
        const line =
          `${scenario.name.padEnd(12)} median ${String(medianMs).padStart(5)} ms, ` +
          `RSS ${String(medianRssMB).padStart(4)} MB, client-node loaded: ${clientNodeLoaded}` +
          `  (${scenario.description})`;
        summary.push(line);
        console.log(line);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const path = writeResults({
      benchmark: override ? 'import-cost-other' : 'import-cost',
      measures:
        'Wall time of the import (and lock selection) in a fresh process, its RSS afterwards, ' +
        'and whether @kubernetes/client-node was loaded',
      command,
      parameters: { rounds: settings.rounds, entry },
      results,
      summary,
    });
    console.log(`results: ${path}`);
  },
};
