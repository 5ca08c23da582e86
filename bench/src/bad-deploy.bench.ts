/**
 * What a bad deploy costs the leader-only work (issue 32): the demo's Deployment on the
 * repository's one-node cluster (`scripts/cluster.sh`, needs root), with each shipped variant —
 * leader-only readiness (`apps/demo/deploy`) and label routing (`apps/demo/deploy-label-routing`)
 * — given each bad template of `test/support/bad-deploy.ts` (an image that cannot be pulled,
 * pods that crash after they advertise, pods that never become healthy) `--rounds` times
 * (default 10): watched 30 s after its pods showed the failure, then `kubectl rollout undo`.
 *
 * Per bad deploy: the longest time without a leader-work line of any pod (the pods' own logs,
 * `PodLogCollector`, one clock: the node is this host), whether the holder changed, and the
 * leadership transitions. The figures behind the READMEs' bad-deploy table.
 */
import { join } from 'node:path';
import { startNodeCluster } from '@nest-leader/demo/launcher/node-cluster';
import {
  BAD_TEMPLATES,
  type BadTemplate,
  undoBadDeploy,
  watchBadDeploy,
} from '@nest-leader/test/support/bad-deploy.js';
import { DemoDeployment } from '@nest-leader/test/support/demo-deployment.js';
import { PodLogCollector } from '@nest-leader/test/support/pod-log-collector.js';
import { repoRoot } from '@nest-leader/test/support/control-plane.js';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { writeResults } from './support/results.js';
import { describeMs, type MsDistribution } from './support/stats.js';

const NAMESPACE = 'nest-leader-demo';
const SELECTOR = 'app.kubernetes.io/name=nest-leader-demo';
const OBSERVE_MS = 30_000;
const VARIANTS = {
  'leader-only readiness': 'apps/demo/deploy',
  'label routing': 'apps/demo/deploy-label-routing',
} as const;
type Variant = keyof typeof VARIANTS;

interface BadDeployRound {
  round: number;
  longestGapMs: number;
  holderChanged: boolean;
  transitions: number;
  observedMs: number;
}

interface CaseResult {
  variant: Variant;
  kind: BadTemplate;
  rounds: BadDeployRound[];
  gap: MsDistribution;
  /** Rounds in which the old leader kept the Lease throughout. */
  leaderKept: number;
}

export const badDeployBench: Benchmark = {
  name: 'bad-deploy',
  description:
    'bad deploys of the demo in pods (unpullable image, crash after advertising, never healthy), per manifest variant: longest leader-work gap (root)',
  settings: ['rounds'],
  inDefaultRun: false,
  async run(settings: BenchSettings, command: string): Promise<void> {
    const started = performance.now();
    const progress = (line: string) => console.log(`# bad-deploy: ${line}`);
    const cluster = await startNodeCluster({ onProgress: progress });
    const results: CaseResult[] = [];
    const demo = new DemoDeployment(cluster, NAMESPACE, SELECTOR, 'demo');
    const logs = new PodLogCollector(demo);
    try {
      for (const [variant, manifests] of Object.entries(VARIANTS) as [Variant, string][]) {
        await cluster.kubectl('apply', '-k', join(repoRoot, manifests));
        await demo.settled();
        for (const kind of Object.keys(BAD_TEMPLATES) as BadTemplate[]) {
          const rounds: BadDeployRound[] = [];
          for (let round = 1; round <= settings.rounds; round++) {
            const revision = await demo.revision();
            const figures = await watchBadDeploy(demo, logs, kind, { observeMs: OBSERVE_MS });
            const leaderPod = (await demo.pods()).find((p) => p.name === figures.leader);
            rounds.push({
              round,
              longestGapMs: Math.round(figures.longestGap.gapMs),
              holderChanged: figures.holders.some((h) => h !== figures.leader),
              transitions: figures.transitions,
              observedMs: figures.observedMs,
            });
            progress(
              `${variant}, ${kind}, ${round}/${settings.rounds}: longest gap ` +
                `${rounds.at(-1)!.longestGapMs} ms, holders ${figures.holders.join(' → ')}`,
            );
            await undoBadDeploy(demo, revision, leaderPod?.templateHash);
            await demo.settled();
          }
          results.push({
            variant,
            kind,
            rounds,
            gap: describeMs(rounds.map((r) => r.longestGapMs)),
            leaderKept: rounds.filter((r) => !r.holderChanged).length,
          });
        }
      }
    } finally {
      await logs.stop();
      await cluster.stop();
    }
    const summary = [
      `bad-deploy: ${settings.rounds} round(s) per case, watched ${OBSERVE_MS / 1000} s after the failure showed, in ${((performance.now() - started) / 60_000).toFixed(1)} min`,
      'variant                 bad template                            leader kept  longest leader-work gap ms median / p90 / max',
      ...results.map(
        (r) =>
          `${r.variant.padEnd(23)} ${r.kind.padEnd(39)} ${`${r.leaderKept}/${r.rounds.length}`.padEnd(12)} ` +
          `${r.gap.medianMs} / ${r.gap.p90Ms} / ${r.gap.maxMs}`,
      ),
    ];
    const path = writeResults({
      benchmark: 'bad-deploy',
      measures:
        'bad deploys of the demo Deployment in pods, per manifest variant: the longest gap in leader-only work and whether the old leader kept the Lease',
      command,
      parameters: { rounds: settings.rounds, observeMs: OBSERVE_MS, timings: [15, 10, 2] },
      results,
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`results: ${path}`);
  },
};
