/**
 * What ghosts on the Lease cost the leader-only work (issue 31): the demo's Deployment
 * (`apps/demo/deploy`, verbatim: library defaults 15/10/2, leader-only readiness, 3 replicas)
 * on the repository's one-node cluster (`scripts/cluster.sh`: kubelet + containerd, needs
 * root); each of a graceful deletion of the leader pod, its eviction and a rollout, beside 0, 1
 * and 3 ghosts, `--rounds` times (default 5), interleaved (round by round every case once, so
 * the machine's load drifts over all cases alike).
 *
 * A ghost is a candidate killed through the runtime and force-deleted: its advertisement stays
 * on the Lease. Each is the candidate the leader would hand to next (`test/support/pod-ghosts.ts`):
 * a follower of its own template for a deletion or an eviction, a new pod that advertised
 * itself for a rollout (the rollout is held with the old leader until the ghosts are left, then
 * let go: `test/support/ghost-handover.ts`; the 0-ghost rollout goes the same way).
 *
 * Per handover, from the pods' own `leader-work` lines (`PodLogCollector`; one clock, the node
 * is this host): the longest time without leader-only work from the action to the new leader's
 * first line, whether a ghost held the Lease, and the leadership transitions.
 */
import { join } from 'node:path';
import { startNodeCluster } from '@nest-leader/demo/launcher/node-cluster';
import { DemoDeployment } from '@nest-leader/test/support/demo-deployment.js';
import {
  GHOST_SCENARIOS,
  ghostHandover,
  type GhostHandoverFigures,
  type GhostScenario,
} from '@nest-leader/test/support/ghost-handover.js';
import { PodLogCollector } from '@nest-leader/test/support/pod-log-collector.js';
import { repoRoot } from '@nest-leader/test/support/control-plane.js';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { writeResults } from './support/results.js';
import { describeMs, type MsDistribution } from './support/stats.js';

const NAMESPACE = 'nest-leader-demo';
const SELECTOR = 'app.kubernetes.io/name=nest-leader-demo';
const GHOST_COUNTS = [0, 1, 3] as const;

interface GhostRound extends GhostHandoverFigures {
  round: number;
}

interface CaseResult {
  scenario: GhostScenario;
  ghosts: number;
  rounds: GhostRound[];
  /** The longest leader-work gap of each round. */
  longestGap: MsDistribution;
  /** From the action to the new leader's first leader-only work. */
  handover: MsDistribution;
  /** From the old leader's last leader-work line to the new leader's first. */
  handoverGap: MsDistribution;
  /** Rounds in which a ghost held the Lease. */
  handedToGhost: number;
  /** Rounds whose handover cost exactly one leadership transition. */
  oneTransition: number;
}

export const ghostsBench: Benchmark = {
  name: 'ghosts',
  description:
    'the demo in pods: graceful deletion, eviction and rollout beside 0, 1 and 3 ghosts (killed, force-deleted, still advertised): longest leader-work gap (root)',
  settings: ['rounds'],
  inDefaultRun: false,
  async run(settings: BenchSettings, command: string): Promise<void> {
    const started = performance.now();
    const progress = (line: string) => console.log(`# ghosts: ${line}`);
    const cluster = await startNodeCluster({ onProgress: progress });
    const rounds = new Map<string, GhostRound[]>();
    const key = (scenario: GhostScenario, ghosts: number) => `${scenario}/${ghosts}`;
    try {
      await cluster.kubectl('apply', '-k', join(repoRoot, 'apps/demo/deploy'));
      const demo = new DemoDeployment(cluster, NAMESPACE, SELECTOR, 'demo');
      const logs = new PodLogCollector(demo);
      try {
        for (let round = 1; round <= settings.rounds; round++) {
          for (const scenario of GHOST_SCENARIOS) {
            for (const ghosts of GHOST_COUNTS) {
              await demo.settled();
              const figures = await ghostHandover(demo, logs, scenario, ghosts);
              const list = rounds.get(key(scenario, ghosts)) ?? [];
              list.push({ round, ...figures });
              rounds.set(key(scenario, ghosts), list);
              progress(
                `round ${round}/${settings.rounds}, ${scenario}, ${ghosts} ghost(s): ` +
                  `longest gap ${figures.longestGapMs} ms, old → new work ${figures.handoverGapMs} ms, ` +
                  `handover ${figures.handoverMs} ms, ` +
                  `${figures.transitions} transition(s)` +
                  (figures.handedToGhost ? ', HANDED TO A GHOST' : ''),
              );
            }
          }
        }
      } finally {
        await logs.stop();
      }
    } finally {
      await cluster.stop();
    }
    const results = GHOST_SCENARIOS.flatMap((scenario) =>
      GHOST_COUNTS.map((ghosts) =>
        summarizeCase(scenario, ghosts, rounds.get(key(scenario, ghosts)) ?? []),
      ),
    );
    const summary = summarize(results, settings.rounds, performance.now() - started);
    const path = writeResults({
      benchmark: 'ghosts',
      measures:
        'graceful deletion, eviction and rollout of the demo in pods beside 0, 1 and 3 ghosts: longest gap in leader-only work, handover time, transitions',
      command,
      parameters: {
        rounds: settings.rounds,
        ghosts: GHOST_COUNTS,
        scenarios: GHOST_SCENARIOS,
        replicas: 3,
        timings: [15, 10, 2],
      },
      results,
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`results: ${path}`);
  },
};

function summarizeCase(scenario: GhostScenario, ghosts: number, rounds: GhostRound[]): CaseResult {
  return {
    scenario,
    ghosts,
    rounds,
    longestGap: describeMs(rounds.map((r) => r.longestGapMs)),
    handover: describeMs(rounds.map((r) => r.handoverMs)),
    handoverGap: describeMs(rounds.map((r) => r.handoverGapMs)),
    handedToGhost: rounds.filter((r) => r.handedToGhost).length,
    oneTransition: rounds.filter((r) => r.transitions === 1).length,
  };
}

function summarize(results: CaseResult[], rounds: number, elapsedMs: number): string[] {
  const lines = [
    `ghosts: ${rounds} round(s) per case (demo in pods, 3 replicas, 15/10/2) in ${(elapsedMs / 60_000).toFixed(1)} min`,
    'scenario           ghosts  longest leader-work gap ms median / p99 / max  old → new work ms median / max  handover ms median  to a ghost  1 transition',
  ];
  for (const r of results) {
    lines.push(
      `${r.scenario.padEnd(18)} ${String(r.ghosts).padEnd(7)} ` +
        `${`${r.longestGap.medianMs} / ${r.longestGap.p99Ms} / ${r.longestGap.maxMs}`.padEnd(44)} ` +
        `${`${r.handoverGap.medianMs} / ${r.handoverGap.maxMs}`.padEnd(30)} ` +
        `${String(r.handover.medianMs).padEnd(19)} ` +
        `${`${r.handedToGhost}/${r.rounds.length}`.padEnd(11)} ${r.oneTransition}/${r.rounds.length}`,
    );
  }
  return lines;
}
