/** What `run.ts` needs to know about one benchmark. */

/** Command-line settings shared by the benchmarks (each reads the ones it uses). */
export interface BenchSettings {
  /** failover: handovers measured per scenario. */
  rounds: number;
  /** api-load: length of the measured steady state, seconds. */
  seconds: number;
  /** gate: sampling time per task and repeat, ms. */
  timeMs: number;
  /** gate: how many times the whole task set runs (medians across repeats are reported). */
  repeats: number;
  /** compare: a short run for development (fewer rounds, shorter windows). */
  quick: boolean;
}

export interface Benchmark {
  /** Name on the command line and of the results file. */
  name: string;
  /** One line for `--help`. */
  description: string;
  /** The settings it reads (recorded with its results as the command that produced them). */
  settings: readonly (keyof BenchSettings)[];
  /** Whether `pnpm bench` without names runs it; default true. */
  inDefaultRun?: boolean;
  /** Runs to completion, writes `bench/results/<name>.json`, prints a summary. */
  run(settings: BenchSettings, command: string): Promise<void>;
}
