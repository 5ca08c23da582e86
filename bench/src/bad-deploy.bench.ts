/**
 * What a bad deploy costs the leader-only work (issue 32): the demo's Deployment on the
 * repository's one-node cluster (`scripts/cluster.sh`, needs root), with each shipped variant —
 * leader-only readiness (`apps/demo/deploy`) and label routing (`apps/demo/deploy-label-routing`)
 * — given each bad template of `test/support/bad-deploy.ts` (an image that cannot be pulled,
 * pods that crash after they advertise, pods that never become healthy) `--rounds` times
 * (default 10): watched 30 s after its pods showed the failure, then `kubectl rollout undo`;
 * after each variant's bad deploys, one good rollout (`kubectl rollout restart`).
 *
 * Per bad deploy: the longest time without a leader-work line of any pod (the pods' own logs,
 * `PodLogCollector`, one clock: the node is this host) from the patch to the end of the watch,
 * and again to the end of the undo; whether the holder changed, and the leadership
 * transitions. Per good rollout: transitions, leaderless time and duration
 * (`DemoDeployment.rolloutRestart`) and the longest leader-work gap. The figures behind the
 * READMEs' bad-deploy table.
 */
import { join } from 'node:path';
import { startNodeCluster } from '@nest-leader/demo/launcher/node-cluster';
import {
  BAD_TEMPLATES,
  type BadTemplate,
  leaderWork,
  undoBadDeploy,
  watchBadDeploy,
} from '@nest-leader/test/support/bad-deploy.js';
import { longestWorkGap } from '@nest-leader/demo/demo-events';
import {
  DemoDeployment,
  type LeaseWatchFigures,
} from '@nest-leader/test/support/demo-deployment.js';
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
  /** The longest gap from the patch to the end of the undo. */
  undoLongestGapMs: number;
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

/** The good rollout after a variant's bad deploys. */
interface GoodRolloutResult extends LeaseWatchFigures {
  variant: Variant;
  longestGapMs: number;
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
    const goodRollouts: GoodRolloutResult[] = [];
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
            const fromMs = Date.now();
            const figures = await watchBadDeploy(demo, logs, kind, { observeMs: OBSERVE_MS });
            const leaderPod = (await demo.pods()).find((p) => p.name === figures.leader);
            await undoBadDeploy(demo, revision, leaderPod?.templateHash);
            await demo.settled();
            const undoGap = longestWorkGap(leaderWork(logs), fromMs, Date.now());
            const holderAfterUndo = (await demo.leaseSpec()).holderIdentity;
            rounds.push({
              round,
              longestGapMs: Math.round(figures.longestGap.gapMs),
              undoLongestGapMs: Math.round(undoGap.gapMs),
              holderChanged:
                figures.holders.some((h) => h !== figures.leader) ||
                holderAfterUndo !== figures.leader,
              transitions: figures.transitions,
              observedMs: figures.observedMs,
            });
            progress(
              `${variant}, ${kind}, ${round}/${settings.rounds}: longest gap ` +
                `${rounds.at(-1)!.longestGapMs} ms (to the undo's end ` +
                `${rounds.at(-1)!.undoLongestGapMs} ms), holders ${figures.holders.join(' → ')}, ` +
                `after the undo ${holderAfterUndo}`,
            );
          }
          results.push({
            variant,
            kind,
            rounds,
            gap: describeMs(rounds.map((r) => r.longestGapMs)),
            leaderKept: rounds.filter((r) => !r.holderChanged).length,
          });
        }
        const fromMs = Date.now();
        const { progressDeadlineMs: _, ...rollout } = await demo.rolloutRestart();
        const gap = longestWorkGap(leaderWork(logs), fromMs, Date.now());
        goodRollouts.push({ variant, ...rollout, longestGapMs: Math.round(gap.gapMs) });
        progress(
          `${variant}, good rollout: ${rollout.transitions} transition(s), leaderless ` +
            `${rollout.leaderlessMs} ms, ${rollout.elapsedMs} ms, longest gap ${gap.gapMs} ms`,
        );
        await demo.settled();
      }
    } finally {
      await logs.stop();
      await cluster.stop();
    }
    const summary = [
      `bad-deploy: ${settings.rounds} round(s) per case, watched ${OBSERVE_MS / 1000} s after the failure showed, in ${((performance.now() - started) / 60_000).toFixed(1)} min`,
      "variant                 bad template                            leader kept  longest leader-work gap ms median / p90 / max; to the undo's end: max",
      ...results.map(
        (r) =>
          `${r.variant.padEnd(23)} ${r.kind.padEnd(39)} ${`${r.leaderKept}/${r.rounds.length}`.padEnd(12)} ` +
          `${r.gap.medianMs} / ${r.gap.p90Ms} / ${r.gap.maxMs}; ` +
          `${Math.max(...r.rounds.map((round) => round.undoLongestGapMs))}`,
      ),
      'variant                 good rollout after the bad deploys: transitions, leaderless ms, duration ms, longest leader-work gap ms',
      ...goodRollouts.map(
        (g) =>
          `${g.variant.padEnd(23)} ${g.transitions}, ${g.leaderlessMs}, ${g.elapsedMs}, ${g.longestGapMs}`,
      ),
    ];
    const path = writeResults({
      benchmark: 'bad-deploy',
      measures:
        'bad deploys of the demo Deployment in pods, per manifest variant: the longest gap in leader-only work and whether the old leader kept the Lease',
      command,
      parameters: { rounds: settings.rounds, observeMs: OBSERVE_MS, timings: [15, 10, 2] },
      results: { badDeploys: results, goodRollouts },
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`results: ${path}`);
  },
};
