/**
 * The short chaos run, part of `pnpm test`: five demo replicas on their own real kube-apiserver,
 * each through its own toxiproxy link; the seeded fault schedule runs until at least 40
 * leadership transitions happened and every fault kind was applied at least once. Any
 * violation fails the test: overlapping terms, work after a term ended, a token that does not
 * increase, a gap over its fault's bound, a crashed or wedged replica.
 *
 * Replay a run: CHAOS_SEED=<seed printed below> (or `pnpm chaos --seed <seed> --transitions 40`).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CHAOS_TIMINGS, runChaos } from './chaos-run.js';
import { formatSummary } from './chaos-summary.js';
import { FAULT_KINDS } from './fault-kinds.js';
import { randomSeed } from './fault-schedule.js';

const TRANSITIONS = 40;

describe('chaos: every fault kind against five replicas on the real API server', () => {
  it(
    `${TRANSITIONS} faulted transitions, every fault kind at least once: zero violations`,
    { timeout: 15 * 60_000 },
    async () => {
      const seed = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : randomSeed();
      const outDir = mkdtempSync(join(tmpdir(), `nest-leader-chaos-${seed}-`));
      process.stdout.write(
        `# chaos seed ${seed} (replay: CHAOS_SEED=${seed}); output in ${outDir}\n`,
      );
      const { report } = await runChaos({
        transitions: TRANSITIONS,
        everyKindAtLeast: 1,
        seed,
        replicas: 5,
        timings: CHAOS_TIMINGS,
        maxDurationMs: 10 * 60_000,
        outDir,
        command: `CHAOS_SEED=${seed} pnpm test (test/chaos/chaos-short.test.ts)`,
        progress: (line) => process.stdout.write(`# ${line}\n`),
      });
      process.stdout.write(`${formatSummary(report).replace(/^/gm, '# ')}\n`);

      assert.deepEqual(
        report.violations.map((v) => `[${v.kind}] round ${v.round ?? '-'}: ${v.message}`),
        [],
        `seed ${seed}: the chaos run found violations (report in ${outDir})`,
      );
      assert.ok(
        report.transitions >= TRANSITIONS,
        `only ${report.transitions} transitions before the time limit`,
      );
      // The slot rules judge something only if slots were due (a run of dispatch-jobs lines).
      assert.ok(
        (report.slots?.due ?? 0) > 0,
        `no dispatch-jobs slot was due: the slot rules judged nothing (report in ${outDir})`,
      );
      for (const kind of FAULT_KINDS) {
        assert.ok(report.byFault[kind]?.faults, `${kind} was never applied`);
      }
      assert.ok(existsSync(join(outDir, 'chaos-report.json')));
      assert.ok(existsSync(join(outDir, 'chaos-timeline.svg')));
    },
  );
});
