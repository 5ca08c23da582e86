/**
 * Where benchmark results go (`bench/results/<name>.json`) and the context stored with them:
 * machine, Node version, date, git commit, the command that produced them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { arch, cpus, loadavg, platform, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

/** `bench/results/` (this file is compiled to `bench/dist/support/`). */
export const RESULTS_DIR = fileURLToPath(new URL('../../results/', import.meta.url));

/** The machine a result was measured on. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemoryGiB: number;
  platform: string;
  osRelease: string;
  arch: string;
  node: string;
  /** 1, 5 and 15 min load averages when the results were written: others' work skews figures. */
  loadAverage: number[];
}

/** What every results file holds besides the benchmark's own figures. */
export interface ResultsEnvelope<T> {
  benchmark: string;
  /** What was measured, in one sentence. */
  measures: string;
  date: string;
  /** The command line that produced the file (as `pnpm bench …`). */
  command: string;
  machine: MachineInfo;
  git: { commit?: string; dirty?: boolean };
  parameters: Record<string, unknown>;
  results: T;
  /** The human summary printed at the end of the run. */
  summary: string[];
}

export function machineInfo(): MachineInfo {
  const cores = cpus();
  return {
    cpus: cores.length,
    cpuModel: cores[0]?.model.trim() ?? 'unknown',
    totalMemoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: platform(),
    osRelease: release(),
    arch: arch(),
    node: process.version,
    loadAverage: loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

function gitState(): ResultsEnvelope<unknown>['git'] {
  try {
    const run = (...args: string[]) =>
      execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { commit: run('rev-parse', 'HEAD'), dirty: run('status', '--porcelain') !== '' };
  } catch {
    return {};
  }
}

/**
 * Writes `bench/results/<benchmark>.json` (overwriting the previous result) and returns its path.
 */
export function writeResults<T>(
  entry: Omit<ResultsEnvelope<T>, 'date' | 'machine' | 'git'>,
): string {
  const envelope: ResultsEnvelope<T> = {
    benchmark: entry.benchmark,
    measures: entry.measures,
    date: new Date().toISOString(),
    command: entry.command,
    machine: machineInfo(),
    git: gitState(),
    parameters: entry.parameters,
    results: entry.results,
    summary: entry.summary,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = `${RESULTS_DIR}${entry.benchmark}.json`;
  writeFileSync(path, `${JSON.stringify(envelope, null, 2)}\n`);
  return path;
}
