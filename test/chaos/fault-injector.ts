/**
 * Applies one fault of the catalogue (fault-kinds.ts) to the running system and heals it:
 * signals to the leader's process, toxics on the leader's link only, the API server stopped
 * or restarted, a foreign writer on the Lease, the Lease deleted, the leader's event loop
 * blocked, a second process with the leader's identity. Returns what the checker must know
 * (who may not answer probes, whose view may lag, measured downtime).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { eventually } from '../support/eventually.js';
import type { ChaosCluster } from './chaos-cluster.js';
import type { ChaosFleet, FleetProcess } from './chaos-fleet.js';
import {
  type ChaosTimings,
  type FaultKind,
  faultDurations,
  LEASE_DELETED_AT,
} from './fault-kinds.js';
import { ForeignWriter } from './foreign-writer.js';

/** Longest wait for a fault's precondition (every replica caught up), ms. */
const PRECONDITION_WAIT_MS = 30_000;

/** What applying a fault produced. */
export interface AppliedFault {
  unresponsive: string[] | 'all';
  blind: string[] | 'all';
  measurements: Record<string, number>;
  /** Processes to restart once the round's new leader is known (killed slots). */
  restartSlots: number[];
  /** Things that went wrong while applying (not invariant violations by themselves). */
  notes: string[];
}

export interface FaultContext {
  cluster: ChaosCluster;
  fleet: ChaosFleet;
  timings: ChaosTimings;
  leaseName: string;
  /** Waits until more than `termsBefore` terms were announced (false after `timeoutMs`). */
  waitForNewTerm(termsBefore: number, timeoutMs: number): Promise<boolean>;
  /** How long to wait for a takeover before giving up on a round, ms. */
  takeoverTimeoutMs: number;
}

/**
 * Applies `kind` to `leader` (the leader's process, leading term `token`; `termsBefore` terms
 * were announced before) and heals it.
 * @throws Error only when the harness itself fails (toxiproxy or the control plane).
 */
export async function applyFault(
  kind: FaultKind,
  leader: FleetProcess,
  token: number,
  termsBefore: number,
  ctx: FaultContext,
): Promise<AppliedFault> {
  const { fleet, cluster, timings } = ctx;
  const durations = faultDurations(timings);
  const link = cluster.links[leader.slot]!.link;
  const result: AppliedFault = {
    unresponsive: [],
    blind: [],
    measurements: {},
    restartSlots: [],
    notes: [],
  };

  const killUnder = async (writerPeriodMs: number) => {
    const writer = new ForeignWriter(
      cluster.admin,
      cluster.namespace,
      ctx.leaseName,
      writerPeriodMs,
    );
    writer.start();
    try {
      await sleep(1000);
      result.unresponsive = [leader.instance];
      fleet.signal(leader, 'SIGKILL');
      result.restartSlots.push(leader.slot);
      await ctx.waitForNewTerm(termsBefore, ctx.takeoverTimeoutMs);
    } finally {
      await writer.stop();
      result.measurements.foreignWrites = writer.writes;
      result.measurements.foreignMisses = writer.misses;
    }
  };

  /**
   * Holds a fault until a follower took over (plus a moment, so the old leader comes back
   * into a fresh term), at least leaseDuration and at most past the lease.
   */
  const untilTakeover = async () => {
    const { minMs, afterTakeoverMs } = durations.untilTakeover;
    const started = performance.now();
    await Promise.all([
      sleep(minMs),
      ctx
        .waitForNewTerm(termsBefore, durations.pastLeaseMs - afterTakeoverMs)
        .then((tookOver) => (tookOver ? sleep(afterTakeoverMs) : undefined)),
    ]);
    result.measurements.heldMs = Math.round(performance.now() - started);
  };

  const onLink = async (apply: () => Promise<void>, hold: () => Promise<unknown>) => {
    result.blind = [leader.instance];
    await apply();
    try {
      await hold();
    } finally {
      await link.heal();
    }
  };

  switch (kind) {
    case 'sigkill':
      result.unresponsive = [leader.instance];
      fleet.signal(leader, 'SIGKILL');
      result.restartSlots.push(leader.slot);
      await leader.exited;
      break;
    case 'sigterm':
      result.unresponsive = [leader.instance];
      fleet.signal(leader, 'SIGTERM');
      result.restartSlots.push(leader.slot);
      if (!(await exitsWithin(leader, SIGTERM_EXIT_MS))) {
        result.notes.push(
          `${leader.instance} had not exited ${SIGTERM_EXIT_MS / 1000} s after SIGTERM (shutdown hung); SIGKILLed`,
        );
        fleet.signal(leader, 'SIGKILL');
        await leader.exited;
      } else if (leader.exit?.code !== 0) {
        result.notes.push(
          `${leader.instance} exited with ${leader.exit?.code ?? leader.exit?.signal} after SIGTERM (expected 0: drained and released)`,
        );
      }
      break;
    case 'sigstop':
      result.unresponsive = [leader.instance];
      result.blind = [leader.instance];
      leader.unresponsiveUntil = Date.now() + durations.pastLeaseMs + 60_000;
      fleet.signal(leader, 'SIGSTOP');
      await untilTakeover();
      fleet.signal(leader, 'SIGCONT');
      leader.unresponsiveUntil = 0;
      break;
    case 'event-loop-block': {
      result.unresponsive = [leader.instance];
      result.blind = [leader.instance];
      const blockMs = durations.pastLeaseMs;
      leader.unresponsiveUntil = Date.now() + blockMs + 60_000;
      try {
        await leader.replica.request(`/debug/block-event-loop?ms=${blockMs}`, {
          method: 'POST',
          timeoutMs: 5000,
        });
      } catch (error) {
        result.notes.push(`could not block ${leader.instance}: ${(error as Error).message}`);
      }
      await sleep(blockMs + 50);
      leader.unresponsiveUntil = 0;
      break;
    }
    case 'partition-blackhole':
      await onLink(() => link.apply({ kind: 'blackhole' }), untilTakeover);
      break;
    case 'partition-reset':
      await onLink(() => link.apply({ kind: 'reset' }), untilTakeover);
      break;
    case 'slow-close':
      await onLink(
        () => link.apply({ kind: 'slow-close', delayMs: 2 * timings.leaseDurationMs }),
        untilTakeover,
      );
      break;
    case 'latency-near': {
      // The documented tolerance assumes a renewal is one request. Right after a foreign write
      // (the storm and writer rounds stop their writer only once the next term began) the
      // leader's cached resourceVersion is stale and its next renewal costs three (PUT 409,
      // GET, PUT): outside the condition, as the README says. So wait for one renewal first.
      const renewed = await renewedSince(
        ctx,
        leader.identity,
        Date.now(),
        2 * timings.leaseDurationMs,
      );
      result.measurements.renewalWaitMs = renewed.waitedMs;
      if (!renewed.ok) result.notes.push(`${leader.instance} did not renew before latency-near`);
      result.measurements.latencyMs = durations.nearLatencyMs;
      await onLink(
        () => link.apply({ kind: 'latency', latencyMs: durations.nearLatencyMs }),
        () => sleep(durations.nearLatencyHoldMs),
      );
      break;
    }
    case 'latency-past':
      result.measurements.latencyMs = durations.pastLatencyMs;
      await onLink(
        () => link.apply({ kind: 'latency', latencyMs: durations.pastLatencyMs }),
        untilTakeover,
      );
      break;
    case 'apiserver-restart': {
      result.blind = 'all';
      const started = Date.now();
      await cluster.controlPlane.restart();
      result.measurements.apiDowntimeMs = Date.now() - started;
      break;
    }
    case 'apiserver-down': {
      result.blind = 'all';
      const started = Date.now();
      await cluster.controlPlane.stop();
      await sleep(durations.apiDownMs);
      await cluster.controlPlane.restart();
      result.measurements.apiDowntimeMs = Date.now() - started;
      break;
    }
    case 'conflict-storm':
      await killUnder(durations.stormPeriodMs);
      break;
    case 'foreign-writer':
      await killUnder(durations.foreignWriterPeriodMs);
      break;
    case 'lease-deleted': {
      // The library's documented contract: a replica that saw the current holder does not
      // recreate a deleted Lease before that holder's lease ran out, and continues its token.
      // A replica that never saw the current record cannot know (documented exception, as in
      // client-go), so delete only once every running replica has seen the leader's term.
      // A replica spawned by the round before may still be starting (seconds, on a loaded
      // machine): the wait is a precondition, not a measured bound, so it is generous.
      const caughtUp = await everyoneSees(
        fleet,
        leader,
        token,
        Math.max(2 * timings.leaseDurationMs, PRECONDITION_WAIT_MS),
      );
      result.measurements.catchUpMs = caughtUp.waitedMs;
      if (!caughtUp.ok) {
        result.notes.push(`not every replica saw term ${token} before the Lease was deleted`);
      }
      result.blind = 'all';
      // The checker excuses the scheduled job's slots from here: the ledger goes with the Lease.
      result.measurements[LEASE_DELETED_AT] = Date.now();
      const deleted = await deleteLeaseAtTerm(cluster, ctx.leaseName, leader.identity, token);
      if (deleted !== 'deleted') result.notes.push(`the Lease was not deleted: ${deleted}`);
      break;
    }
    case 'same-identity': {
      const twin = await fleet.spawn(fleet.duplicateSlot, leader.identity);
      result.blind = [leader.instance, twin.instance];
      result.unresponsive = [twin.instance];
      await sleep(durations.duplicateMs);
      fleet.signal(twin, 'SIGKILL');
      await twin.exited;
      break;
    }
  }
  return result;
}

/**
 * Waits until the Lease shows a renewal by `holder` after `sinceMs` (epoch ms), or `timeoutMs`.
 */
async function renewedSince(
  ctx: FaultContext,
  holder: string,
  sinceMs: number,
  timeoutMs: number,
): Promise<{ ok: boolean; waitedMs: number }> {
  const api = ctx.cluster.admin.makeApiClient(CoordinationV1Api);
  const started = performance.now();
  const renewed = async () => {
    const lease = await api.readNamespacedLease({
      name: ctx.leaseName,
      namespace: ctx.cluster.namespace,
    });
    const renewTime = lease.spec?.renewTime;
    assert.ok(lease.spec?.holderIdentity === holder && renewTime !== undefined);
    assert.ok(new Date(renewTime).getTime() > sinceMs);
  };
  const ok = await eventually(renewed, { timeoutMs, intervalMs: 50 }).then(
    () => true,
    () => false,
  );
  return { ok, waitedMs: Math.round(performance.now() - started) };
}

/** Waits until every running replica's GET /leader reports term `token` (or `timeoutMs`). */
async function everyoneSees(
  fleet: ChaosFleet,
  leader: FleetProcess,
  token: number,
  timeoutMs: number,
): Promise<{ ok: boolean; waitedMs: number }> {
  const started = performance.now();
  const seenByAll = async () => {
    const others = fleet.alive.filter((p) => p !== leader && p.unresponsiveUntil === 0);
    const seen = await Promise.all(others.map((p) => fleet.status(p, 1000)));
    assert.ok(seen.every((s) => s?.leaseTransitions === token));
  };
  const ok = await eventually(seenByAll, { timeoutMs, intervalMs: 100 }).then(
    () => true,
    () => false,
  );
  return { ok, waitedMs: Math.round(performance.now() - started) };
}

/**
 * Deletes the Lease only as every replica saw it: held by `holder` in term `token`. A term
 * that began between the check and the delete would be unseen by some replica, which could
 * then recreate the Lease at a token already used (the documented exception, not the
 * library's to keep): so the delete carries the resourceVersion of a read at that term, and
 * a renewal in between (a 409) means read and try again. Resolves `deleted`, or why not.
 */
async function deleteLeaseAtTerm(
  cluster: ChaosCluster,
  name: string,
  holder: string,
  token: number,
): Promise<string> {
  const leases = cluster.admin.makeApiClient(CoordinationV1Api);
  const namespace = cluster.namespace;
  for (let attempt = 1; attempt <= 20; attempt++) {
    const lease = await leases.readNamespacedLease({ name, namespace });
    const { holderIdentity, leaseTransitions } = lease.spec ?? {};
    if (holderIdentity !== holder || leaseTransitions !== token) {
      return `it moved on to term ${leaseTransitions} of ${holderIdentity} before the delete`;
    }
    try {
      await leases.deleteNamespacedLease({
        name,
        namespace,
        body: { preconditions: { resourceVersion: lease.metadata!.resourceVersion! } },
      });
      return 'deleted';
    } catch (error) {
      if ((error as { code?: number }).code !== 409) throw error;
    }
  }
  return 'every delete conflicted with a renewal (20 attempts)';
}

/** How long a SIGTERMed replica may take to drain, release and exit before it counts as hung. */
const SIGTERM_EXIT_MS = 10_000;

/** True once `p` exited, false if it is still running after `ms`. */
async function exitsWithin(p: FleetProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const exited = await Promise.race([
    p.exited.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false))),
  ]);
  clearTimeout(timer);
  return exited;
}
