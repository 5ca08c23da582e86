/**
 * Sharded leadership on the real kube-apiserver with real OS processes (issue 36): 64 shards
 * over 3 → 5 → 4 (SIGTERM) → 3 (SIGKILL) → 3 with one SIGSTOPped past its lease and woken →
 * 2 (SIGKILL). After every change every shard is owned again within its bound and the members
 * are balanced within ±1; over the whole run no shard's work overlaps between two owners (the
 * one overlap checker, judged per shard on the work each member actually did) and each shard's
 * tokens only increase.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { overlappingSpans } from '@nest-leader/demo/leadership-overlaps';
import type { CandidateProcess } from '../support/candidate-process.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { monotonicNowMs } from '../support/monotonic-time.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { eventually } from '../support/eventually.js';
import {
  balanced as balancedOver,
  latestUnits,
  SHARDED_VERBS,
  startShardedMember,
  workSpans,
} from '../support/sharded-members.js';

const cluster = getTestCluster();
const SHARDS = 64;
const USERS = ['alice', 'bob', 'carol'] as const;
const LEASE_MS = FAST_TIMINGS.leaseDurationSeconds * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const balanced = (members: CandidateProcess[], sinceMs: number, timeoutMs: number) =>
  balancedOver(members, SHARDS, sinceMs, timeoutMs);

describe('Sharded election on the real kube-apiserver, real processes', () => {
  const fleet: CandidateProcess[] = [];
  before(async () => {
    for (const user of USERS) await grantLeaseAccess(cluster, user, SHARDED_VERBS);
  });
  after(async () => {
    await Promise.all(fleet.map((member) => member.dispose()));
    for (const user of USERS) await revokeLeaseAccess(cluster, user);
  });

  test('64 shards over 3 → 5 → 4 → 3 → 2 replicas with SIGTERM, SIGKILL and SIGSTOP: owned within bounds, ±1, no overlap', async (t) => {
    const leaseName = uniqueLeaseName('sharded');
    let next = 0;
    const join = (): Promise<CandidateProcess> => {
      const user = USERS[next % USERS.length]!;
      next += 1;
      return startShardedMember(
        cluster,
        user,
        leaseName,
        `member-${next}`,
        SHARDS,
        FAST_TIMINGS,
        fleet,
      );
    };
    const report: string[] = [];

    // 3 members.
    let live: CandidateProcess[] = await Promise.all([join(), join(), join()]);
    let sinceMs = monotonicNowMs();
    await balanced(live, sinceMs, 30_000);

    // 3 → 5: two join at once; only what they take moves.
    sinceMs = monotonicNowMs();
    live = [...live, ...(await Promise.all([join(), join()]))];
    const joinedMs = monotonicNowMs();
    report.push(
      `join 3 → 5: balanced ${Math.round((await balanced(live, joinedMs, 20_000)) - sinceMs)} ms after the joins began`,
    );

    // 5 → 4: SIGTERM (graceful leave).
    const leaver = live[0]!;
    const termMs = leaver.kill('SIGTERM');
    await leaver.exited;
    live = live.filter((m) => m !== leaver);
    report.push(
      `SIGTERM 5 → 4: balanced ${Math.round((await balanced(live, termMs, 20_000)) - termMs)} ms after SIGTERM`,
    );

    // 4 → 3: SIGKILL (crash): owned again about leaseDuration after its last renewal.
    const crashed = live[1]!;
    const killMs = crashed.kill('SIGKILL');
    live = live.filter((m) => m !== crashed);
    const afterKillMs = (await balanced(live, killMs, LEASE_MS + 20_000)) - killMs;
    report.push(
      `SIGKILL 4 → 3: balanced ${Math.round(afterKillMs)} ms after SIGKILL (leaseDuration ${LEASE_MS} ms)`,
    );
    assert.ok(afterKillMs <= LEASE_MS + 3_000, `re-owned ${afterKillMs} ms after the kill`);

    // SIGSTOP one past its lease: the two others own everything; woken, it rejoins.
    const paused = live[2]!;
    const stopMs = monotonicNowMs();
    paused.pause();
    const others = live.filter((m) => m !== paused);
    const afterStopMs = (await balanced(others, stopMs, LEASE_MS + 20_000)) - stopMs;
    report.push(`SIGSTOP: the 2 others own all shards ${Math.round(afterStopMs)} ms after SIGSTOP`);
    await sleep(1000);
    paused.resume();
    const contMs = monotonicNowMs();
    report.push(
      `SIGCONT: balanced over 3 ${Math.round((await balanced(live, contMs, 30_000)) - contMs)} ms after SIGCONT`,
    );

    // 3 → 2: SIGKILL.
    const last = live[0]!;
    const lastKillMs = last.kill('SIGKILL');
    live = live.filter((m) => m !== last);
    report.push(
      `SIGKILL 3 → 2: balanced ${Math.round((await balanced(live, lastKillMs, LEASE_MS + 20_000)) - lastKillMs)} ms after SIGKILL`,
    );

    // Over the whole run: no shard worked on by two owners at once; tokens only increase.
    const spans = workSpans(fleet);
    const overlaps: string[] = [];
    for (let shard = 0; shard < SHARDS; shard++) {
      const ofShard = spans.filter((s) => s.shard === shard);
      for (const [a, b] of overlappingSpans(ofShard, (s) => s, 'apart')) {
        overlaps.push(
          `shard ${shard}: ${a.owner} [${a.startMs}, ${a.endMs}] and ${b.owner} [${b.startMs}, ${b.endMs}]`,
        );
      }
      const byStart = ofShard.sort((a, b) => a.startMs - b.startMs);
      for (let i = 1; i < byStart.length; i++) {
        assert.ok(
          byStart[i]!.token > byStart[i - 1]!.token,
          `shard ${shard}: token ${byStart[i]!.token} after ${byStart[i - 1]!.token}`,
        );
      }
    }
    const moves = spans.length - SHARDS;
    report.push(`${spans.length} shard terms worked (${moves} moves), ${overlaps.length} overlaps`);
    for (const line of report) t.diagnostic(line);
    assert.deepEqual(overlaps, []);
  });

  test('a member SIGSTOPped between its check and its fenced write: its stale-token writes are refused, none accepted', async (t) => {
    const leaseName = uniqueLeaseName('sharded-fenced');
    const dir = mkdtempSync(join(tmpdir(), 'sharded-fenced-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const pauseFile = join(dir, 'pause-a');
    const shards = 8;
    const fenced = ['--fenced-dir', dir];
    const a = await startShardedMember(
      cluster,
      'alice',
      leaseName,
      'fenced-a',
      shards,
      FAST_TIMINGS,
      fleet,
      [...fenced, '--pause-file', pauseFile],
    );
    const b = await startShardedMember(
      cluster,
      'bob',
      leaseName,
      'fenced-b',
      shards,
      FAST_TIMINGS,
      fleet,
      fenced,
    );
    await balancedOver([a, b], shards, monotonicNowMs(), 30_000);
    await a.waitFor((e) => e.event === 'write-accepted', 10_000, 'a fenced write');

    // Open a's write window and stop it inside: its check passed, its write has not happened.
    writeFileSync(pauseFile, '');
    const windowMs = monotonicNowMs();
    const window = await a.waitFor(
      (e) => e.event === 'write-window' && e.monotonicMs > windowMs,
      10_000,
      'the write window',
    );
    a.pause();
    const itsShards = latestUnits(a, window.monotonicMs - 1000)?.shards ?? [];
    assert.ok(itsShards.length > 0);
    // b takes a's shards (a's member Lease expires) and writes them under newer tokens.
    await eventually(
      () =>
        assert.ok(
          itsShards.every((shard) =>
            b.events.some(
              (e) =>
                e.event === 'write-accepted' &&
                e.shard === shard &&
                e.monotonicMs > window.monotonicMs,
            ),
          ),
          'b wrote every shard of a',
        ),
      { timeoutMs: LEASE_MS + 15_000 },
    );
    rmSync(pauseFile);
    a.resume();
    await a.waitFor((e) => e.event === 'write-rejected', 10_000, 'a refused write');

    const refused = a.events.filter((e) => e.event === 'write-rejected').length;
    const staleAccepted: string[] = [];
    for (let shard = 0; shard < shards; shard++) {
      const accepted = [...a.events, ...b.events]
        .filter((e) => e.event === 'write-accepted' && e.shard === shard)
        .sort((x, y) => x.monotonicMs - y.monotonicMs);
      for (let i = 1; i < accepted.length; i++) {
        if (accepted[i]!.token! < accepted[i - 1]!.token!)
          staleAccepted.push(
            `shard ${shard}: ${accepted[i]!.entry} after token ${accepted[i - 1]!.token}`,
          );
      }
    }
    t.diagnostic(`${refused} stale-token writes refused, ${staleAccepted.length} accepted`);
    assert.ok(refused > 0);
    assert.deepEqual(staleAccepted, []);
  });
});
