/**
 * The chaos harness's sharded mode, part of `pnpm test`:
 * - the short run: one sharded election of 64 shards (3 members at the start, 2–5 during the
 *   run) on the run's real kube-apiserver, each member through its own toxiproxy link; a fixed
 *   seed's rounds until every drawn fault kind was applied once (about a minute). Every shard is
 *   judged as one election by the one checker: no overlapping shard terms, tokens strictly
 *   increasing, no work after a shard term ended, every shard owned again within its fault's
 *   bound, every change balanced within ±1; the fenced ledgers hold no stale-token write, and
 *   the woken SIGSTOPped member's stale writes were refused.
 * - the positive control: a member built to ignore its revoke (`--ignore-revoke`) keeps working
 *   the shards a joining member takes from it; the same judge must report the overlap.
 *
 * Replay the short run: `pnpm chaos --sharded --seed 3601 --kill-stop-rounds 0 --moves 0
 * --every-kind-at-least 1` (its bag holds the extra SIGKILL/SIGSTOP copies of the long run).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { monotonicNowMs } from '../support/monotonic-time.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { SHARDED_VERBS } from '../support/sharded-members.js';
import { formatSummary } from './chaos-summary.js';
import { DEFAULT_ALLOWANCES } from './fault-kinds.js';
import { DRAWN_SHARD_FAULT_KINDS } from './sharded-fault-kinds.js';
import {
  formatShardedFigures,
  judgeLane,
  runShardedChaos,
  SHARDED_CHAOS_TIMINGS,
} from './sharded-chaos-run.js';
import { ShardedLane } from './sharded-fleet.js';
import { startToxiproxy } from './toxiproxy-server.js';

const cluster = getTestCluster();
const USERS = ['alice', 'bob', 'carol', 'dave'] as const;
const SEED = 3601;
const SHARDS = 64;

describe('chaos, sharded mode: faults per member of a sharded election, judged per shard', () => {
  after(async () => {
    for (const user of USERS) await revokeLeaseAccess(cluster, user);
  });

  it(
    `the short run (seed ${SEED}, ${SHARDS} shards, every fault kind once): zero violations`,
    { timeout: 5 * 60_000 },
    async () => {
      const outDir = mkdtempSync(join(tmpdir(), `nest-leader-sharded-chaos-${SEED}-`));
      const { report } = await runShardedChaos({
        seed: SEED,
        shards: SHARDS,
        lanes: 1,
        members: 3,
        timings: SHARDED_CHAOS_TIMINGS,
        killStopRounds: 0,
        moves: 0,
        everyKindAtLeast: 1,
        bagExtras: {},
        maxDurationMs: 90_000,
        outDir,
        command: 'pnpm test (test/chaos/sharded-chaos.test.ts)',
        progress: (line) => process.stdout.write(`# ${line}\n`),
        cluster,
      });
      process.stdout.write(
        `${`${formatSummary(report)}\n${formatShardedFigures(report.sharded)}`.replace(/^/gm, '# ')}\n`,
      );
      assert.deepEqual(
        report.violations.map((v) => `[${v.kind}] round ${v.round ?? '-'}: ${v.message}`),
        [],
        `seed ${SEED}: the sharded run found violations (report in ${outDir})`,
      );
      for (const kind of DRAWN_SHARD_FAULT_KINDS) {
        assert.ok(report.sharded.faultsByKind[kind], `${kind} was never applied`);
      }
      assert.ok(report.sharded.moves > 0, 'no shard moved');
      assert.ok(report.sharded.fenced.refusedInSigstopRounds > 0, 'no stale write was refused');
      assert.equal(report.sharded.fenced.staleAccepted, 0);
      assert.ok(report.sharded.fenced.ledgerRows > 0, 'the ledgers hold nothing');
      assert.ok(existsSync(join(outDir, 'chaos-timeline.svg')));
      rmSync(outDir, { recursive: true, force: true });
    },
  );

  it('positive control: a member that ignores its revoke keeps working moved shards; the checker reports the overlap', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'nest-leader-sharded-control-'));
    const toxiproxy = await startToxiproxy(() => undefined);
    t.after(async () => {
      await toxiproxy.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    for (const user of USERS) await grantLeaseAccess(cluster, user, SHARDED_VERBS);
    const timings = SHARDED_CHAOS_TIMINGS;
    const lane = await ShardedLane.create({
      lane: 0,
      cluster,
      toxiproxy: toxiproxy.client,
      users: USERS,
      leaseName: uniqueLeaseName('sharded-control'),
      shards: 16,
      timings: {
        leaseDurationSeconds: timings.leaseDurationMs / 1000,
        renewDeadlineSeconds: timings.renewDeadlineMs / 1000,
        retryPeriodSeconds: timings.retryPeriodMs / 1000,
      },
      dir,
      // The second member is the unsafe one.
      extraArgs: (n) => (n === 2 ? ['--ignore-revoke'] : []),
    });
    const offsetMs = Date.now() - monotonicNowMs();
    const startedAt = Date.now();
    try {
      await lane.spawn();
      const unsafe = await lane.spawn();
      await lane.balanced(monotonicNowMs(), 30_000);
      // A third member joins: shards move to it from both, the unsafe member's by revoke.
      const joinedMs = monotonicNowMs();
      await lane.spawn();
      await eventually(
        () => {
          const kept = unsafe.process.events.some(
            (e) => e.event === 'stopped' && e.reason === 'revoked' && e.monotonicMs > joinedMs,
          );
          assert.ok(kept, 'the unsafe member had no shard revoked yet');
        },
        { timeoutMs: 20_000 },
      );
      // Let its kept shards run beside their new owner for a second.
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await lane.dispose();
    }
    const verdict = judgeLane(
      lane,
      [],
      offsetMs,
      startedAt,
      Date.now(),
      timings,
      DEFAULT_ALLOWANCES,
    );
    const overlaps = verdict.violations.filter((v) => v.kind === 'overlapping-terms');
    const afterEnd = verdict.violations.filter((v) => v.kind === 'work-after-term-ended');
    t.diagnostic(`${overlaps.length} overlapping shard terms, ${afterEnd.length} work-after-end`);
    t.diagnostic(overlaps[0]?.message ?? '(none)');
    assert.ok(overlaps.length > 0, 'the checker did not report the unsafe member’s overlap');
    assert.ok(overlaps.every((v) => v.message.includes('l0-m2')));
    assert.ok(afterEnd.length > 0);
    assert.ok(afterEnd.every((v) => v.message.includes('l0-m2')));
  });
});
