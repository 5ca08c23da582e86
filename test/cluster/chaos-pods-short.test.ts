/**
 * The short pod chaos run, part of `pnpm test` (the cluster tier): the demo's pods on a real
 * kubelet + containerd node (apps/demo/deploy as shipped) and one bag of the seeded pod-fault
 * schedule — each kind of the short run once, on the leader pod: a graceful deletion, an
 * eviction, a SIGKILL of its container through containerd, a follower killed and force-deleted
 * (its advertisement left on the Lease) before a graceful deletion of the leader, a scale-down
 * of pods that never started, a freeze, a partition, a kubelet restart and an API server stall.
 * The pods' own log lines are judged by the chaos checker: any violation fails the test
 * (overlapping terms, work after a term ended, a token that does not increase, a gap over its
 * fault kind's bound, a transition where none may follow, a lost or slot-less dispatch).
 *
 * Replay: CHAOS_SEED=<seed> (or `pnpm chaos --cluster --seed <seed> --faults 9 --kinds …`).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { formatSummary } from '../chaos/chaos-summary.js';
import { runPodChaos } from '../chaos/pod-chaos-run.js';
import type { Violation } from '../chaos/invariant-checker.js';
import { POD_FAULT_KINDS, POD_FAULT_SPECS } from '../chaos/pod-fault-kinds.js';
import { UNSAFE_IDENTITY } from '../chaos/pod-positive-control.js';

/** Fixed: CI replays the same schedule (one bag: each kind once, in this seed's order). */
const SEED = 33;

/**
 * The kinds of the short run: every kind but the three rollouts (each a round of a minute or
 * more: every pod replaced; they run in the long runs, `pnpm chaos --cluster`), containerd's
 * restart (the kubelet's stands for a node component restarting under running pods), the
 * cluster restart (a minute: the API server starts again) and the bad deploys (a minute or more each; the cluster tier's demo-pods test deploys the crashing
 * template in both routing variants in CI, the long runs all three).
 */
const SHORT_RUN_KINDS = POD_FAULT_KINDS.filter(
  (kind) =>
    !kind.startsWith('rollout-') &&
    kind !== 'containerd-restart' &&
    kind !== 'cluster-restart' &&
    !kind.startsWith('bad-deploy-'),
);

describe('chaos in real pods: every pod fault kind once, judged from the pods own logs', () => {
  it(
    `${SHORT_RUN_KINDS.length} pod faults on the leader pod (seed ${SEED}): zero violations; then the unsafe candidate joins and its overlap is reported`,
    { timeout: 20 * 60_000 },
    async () => {
      const seed = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : SEED;
      const outDir = mkdtempSync(join(tmpdir(), `nest-leader-chaos-pods-${seed}-`));
      process.stdout.write(`# chaos --cluster seed ${seed}; output in ${outDir}\n`);
      const { report } = await runPodChaos({
        faults: SHORT_RUN_KINDS.length,
        seed,
        kinds: SHORT_RUN_KINDS,
        maxDurationMs: 15 * 60_000,
        outDir,
        command: `CHAOS_SEED=${seed} pnpm test (test/cluster/chaos-pods-short.test.ts)`,
        progress: (line) => process.stdout.write(`# ${line}\n`),
        unsafeIntruder: true,
      });
      process.stdout.write(`${formatSummary(report).replace(/^/gm, '# ')}\n`);
      const control = report.faults.find((f) => f.kind === 'unsafe-intruder');
      assert.ok(control, `the positive control ran (report in ${outDir})`);
      const show = (v: Violation) => `[${v.kind}] round ${v.round ?? '-'}: ${v.message}`;

      assert.deepEqual(
        report.violations.filter((v) => v.at < control.startAt).map(show),
        [],
        `seed ${seed}: the pod chaos run found violations (report in ${outDir})`,
      );
      for (const kind of SHORT_RUN_KINDS) {
        assert.equal(report.byFault[kind]?.faults, 1, `${kind} applied once`);
        if (POD_FAULT_SPECS[kind].endsTerm) {
          assert.ok(
            (report.byFault[kind]?.transitions ?? 0) >= 1,
            `${kind} was followed by a transition`,
          );
        }
      }
      assert.ok(
        (report.slots?.due ?? 0) > 0,
        `no dispatch-jobs slot was due: the slot rules judged nothing (report in ${outDir})`,
      );
      // Positive control: the unsafe candidate, woken after a pod took its Lease over, worked
      // beside that pod's term; the same checker must say so.
      const overlaps = report.violations.filter(
        (v) => v.at >= control.startAt && v.kind === 'overlapping-terms',
      );
      assert.ok(
        overlaps.some((v) => v.message.includes(UNSAFE_IDENTITY)),
        `the checker reported the unsafe candidate's overlap: ${report.violations.map(show).join('; ')}`,
      );
      assert.ok(existsSync(join(outDir, 'chaos-timeline.svg')));
    },
  );
});
