/**
 * What a rollout costs in leadership (issue 23): the demo's Deployment (`apps/demo/deploy`,
 * verbatim: library defaults 15/10/2, leader-only readiness) on the repository's one-node
 * cluster (`scripts/cluster.sh`: kubelet + containerd, needs root), `kubectl rollout restart`
 * `--rounds` times (default 10) at 3 and at 5 replicas, with preference on and off:
 *
 * - on: the manifests as shipped — each pod advertises its pod-template-hash
 *   (`POD_TEMPLATE_HASH` from the downward API), so the old leader, SIGTERMed by the rollout,
 *   hands the Lease to a pod of the newest template;
 * - on: … with `maxUnavailable: replicas − 1`, the old leader hands over to a new pod while it
 *   runs (`yieldToNewerTemplate`) and is removed afterwards;
 * - off: `POD_TEMPLATE_HASH` removed from the pod template — no advertisement, so the leader
 *   releases the Lease to whichever candidate takes it first (the behaviour before preference),
 *   with `maxUnavailable: 100%` (without a yield, a lower value never removes the old leader).
 *
 * Per rollout, from the Lease sampled every ~100 ms plus two kubectl reads
 * (`DemoDeployment.rolloutRestart`): leadership transitions (leaseTransitions after − before)
 * and leaderless time (released, held by a pod that is gone, or by a terminating pod whose role
 * label no longer says leader — its drain and handoff; a stopping leader that leads on while it
 * waits for the new pods is not leaderless). Switching variants is itself a rollout, not counted.
 * A sample takes two kubectl calls (a few hundred ms under load), so stretches shorter than a
 * sample count as 0 or as about one sample: the figure is coarse below ~1 s (bench/README.md).
 */
import { join } from 'node:path';
import { startNodeCluster, type NodeCluster } from '@nest-leader/demo/launcher/node-cluster';
import {
  DemoDeployment,
  type LeaseWatchFigures,
} from '@nest-leader/test/support/demo-deployment.js';
import { repoRoot } from '@nest-leader/test/support/control-plane.js';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { writeResults } from './support/results.js';
import { describeMs, median, type MsDistribution } from './support/stats.js';

const NAMESPACE = 'nest-leader-demo';
const SELECTOR = 'app.kubernetes.io/name=nest-leader-demo';
const REPLICAS = [3, 5] as const;
type Variant = 'preference on' | 'preference off';

interface RolloutRound extends LeaseWatchFigures {
  round: number;
}

interface CaseResult {
  replicas: number;
  variant: Variant;
  rounds: RolloutRound[];
  /** Rollouts that cost exactly one leadership transition. */
  oneTransition: number;
  transitionsMedian: number;
  transitionsMax: number;
  leaderless: MsDistribution;
  leaderlessTotalMs: number;
}

export const rolloutBench: Benchmark = {
  name: 'rollout',
  description:
    'kubectl rollout restart of the demo in pods (3 and 5 replicas): transitions and leaderless time, preference on vs off (root)',
  settings: ['rounds'],
  inDefaultRun: false,
  async run(settings: BenchSettings, command: string): Promise<void> {
    const started = performance.now();
    const progress = (line: string) => console.log(`# rollout: ${line}`);
    const cluster = await startNodeCluster({ onProgress: progress });
    const results: CaseResult[] = [];
    try {
      await cluster.kubectl('apply', '-k', join(repoRoot, 'apps/demo/deploy'));
      const demo = new DemoDeployment(cluster, NAMESPACE, SELECTOR, 'demo');
      // Variants alternate so that each switch is one rollout: 3 on, 3 off, 5 off, 5 on.
      const plan: [number, Variant][] = [
        [3, 'preference on'],
        [3, 'preference off'],
        [5, 'preference off'],
        [5, 'preference on'],
      ];
      for (const [replicas, variant] of plan) {
        await configure(cluster, demo, replicas, variant, progress);
        const rounds: RolloutRound[] = [];
        for (let round = 1; round <= settings.rounds; round++) {
          const figures = await demo.rolloutRestart();
          const { progressDeadlineMs: _, ...watched } = figures;
          rounds.push({ round, ...watched });
          progress(
            `${replicas} replicas, ${variant}, rollout ${round}/${settings.rounds}: ` +
              `${watched.transitions} transition(s), leaderless ${watched.leaderlessMs} ms, ` +
              `${watched.elapsedMs} ms`,
          );
          await demo.settled();
        }
        results.push(summarizeCase(replicas, variant, rounds));
      }
    } finally {
      await cluster.stop();
    }
    const summary = summarize(results, settings.rounds, performance.now() - started);
    const path = writeResults({
      benchmark: 'rollout',
      measures:
        'kubectl rollout restart of the demo Deployment in pods: leadership transitions and leaderless time per rollout, preference on vs off',
      command,
      parameters: { rounds: settings.rounds, replicas: REPLICAS, timings: [15, 10, 2] },
      results,
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`results: ${path}`);
  },
};

/** Scales to `replicas` and sets the variant (a rollout when it changes), then waits for it. */
async function configure(
  cluster: NodeCluster,
  demo: DemoDeployment,
  replicas: number,
  variant: Variant,
  progress: (line: string) => void,
): Promise<void> {
  progress(`${replicas} replicas, ${variant}: configuring`);
  const deployment = `deployment/${NAMESPACE}`;
  await cluster.kubectl('scale', deployment, '-n', NAMESPACE, `--replicas=${replicas}`);
  if (variant === 'preference off') {
    // Without a podTemplateHash no leader yields to a new pod: the old leader must be stopped
    // by the rollout (maxUnavailable 100%, the manifests' former setting) for it to finish.
    await demo.patch([maxUnavailable('100%')]);
    await cluster.kubectl('set', 'env', deployment, '-n', NAMESPACE, 'POD_TEMPLATE_HASH-');
  } else {
    // The shipped manifests carry POD_TEMPLATE_HASH; re-applying them restores it.
    await cluster.kubectl('apply', '-k', join(repoRoot, 'apps/demo/deploy'));
    await cluster.kubectl('scale', deployment, '-n', NAMESPACE, `--replicas=${replicas}`);
    // As the manifests say: maxUnavailable is replicas - 1 (only the leader is ever Ready).
    await demo.patch([maxUnavailable(replicas - 1)]);
  }
  await demo.settled();
}

/** The JSON-patch operation that sets the rollout's maxUnavailable. */
function maxUnavailable(value: number | string): object {
  return { op: 'replace', path: '/spec/strategy/rollingUpdate/maxUnavailable', value };
}

function summarizeCase(replicas: number, variant: Variant, rounds: RolloutRound[]): CaseResult {
  const transitions = rounds.map((r) => r.transitions);
  const leaderless = rounds.map((r) => r.leaderlessMs);
  return {
    replicas,
    variant,
    rounds,
    oneTransition: transitions.filter((t) => t === 1).length,
    transitionsMedian: median(transitions),
    transitionsMax: Math.max(...transitions),
    leaderless: describeMs(leaderless),
    leaderlessTotalMs: leaderless.reduce((sum, ms) => sum + ms, 0),
  };
}

function summarize(results: CaseResult[], rounds: number, elapsedMs: number): string[] {
  const lines = [
    `rollout: kubectl rollout restart × ${rounds} per case (demo in pods, 15/10/2) in ${(elapsedMs / 60_000).toFixed(1)} min`,
    'replicas  variant          1-transition rollouts  transitions median/max  leaderless ms median / p90 / max  total',
  ];
  for (const r of results) {
    lines.push(
      `${String(r.replicas).padEnd(9)} ${r.variant.padEnd(16)} ${`${r.oneTransition}/${r.rounds.length}`.padEnd(22)} ` +
        `${`${r.transitionsMedian} / ${r.transitionsMax}`.padEnd(23)} ` +
        `${`${r.leaderless.medianMs} / ${r.leaderless.p90Ms} / ${r.leaderless.maxMs}`.padEnd(34)} ${r.leaderlessTotalMs}`,
    );
  }
  return lines;
}
