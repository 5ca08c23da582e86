/**
 * The end-to-end failover scenario of the demo, run once per lock backend (file lock,
 * Kubernetes Lease): three real OS processes of the built demo compete for one Lease; the
 * test checks who leads, what ran where, kills the leader (SIGKILL, then SIGTERM) and checks
 * the failover against client-go's timing bounds and the work log against overlapping terms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import {
  checkLeaderTerms,
  checkShardTerms,
  type LeaderStatus,
  type LeadershipAcquiredEvent,
} from '@nest-leader/demo/demo-events';
import { scrapeReplica } from '@nest-leader/demo/launcher/metrics-scrape';
import { type FailoverMeasurement, ReplicaFleet } from '@nest-leader/demo/launcher/replica-fleet';
import type { ReplicaProcess } from '@nest-leader/demo/launcher/replica-process';
import { ORDER_SHARDS, RECONCILE_INTERVAL_MS } from '@nest-leader/demo/demo.constants';
import { eventually } from '../../support/eventually.js';
import { recordFailover } from './failover-results.js';

/** Short timings so the suite is fast: leaseDuration 4 s, renewDeadline 3 s, retryPeriod 1 s. */
export const E2E_TIMINGS = {
  leaseDurationSeconds: 4,
  renewDeadlineSeconds: 3,
  retryPeriodSeconds: 1,
} as const;

const { leaseDurationSeconds, retryPeriodSeconds } = E2E_TIMINGS;
const leaseDurationMs = leaseDurationSeconds * 1000;
/**
 * The issue's bounds, asserted as they are. They hold because a follower retries every
 * retryPeriod × [1, 1.2) and also wakes exactly when the holder's lease expires by its own
 * observation (see the elector's acquire loop):
 * - SIGKILL: the follower saw the leader's last renewal at most 1.2 × retryPeriod after it,
 *   takes over leaseDuration after that, and its reconciler (every RECONCILE_INTERVAL_MS)
 *   does the first leader-only work: 4 + 1.2 + 1 = 6.2 s ≤ leaseDuration + 1.2 × retryPeriod + 2 s.
 * - SIGTERM: the leader drains (one simulated dispatch at most) and releases; a follower takes
 *   the free Lease at its next attempt: 1.2 + 0.15 s ≤ 1.2 × retryPeriod + 1 s — below
 *   leaseDuration, so meeting it proves the Lease was released, not left to expire.
 */
export const ISSUE_TARGETS_MS = {
  SIGKILL: (leaseDurationSeconds + 1.2 * retryPeriodSeconds + 2) * 1000,
  SIGTERM: (1.2 * retryPeriodSeconds + 1) * 1000,
} as const;
const KILL_FIRST_WORK_BOUND_MS = ISSUE_TARGETS_MS.SIGKILL;
const GRACEFUL_ACQUIRE_BOUND_MS = ISSUE_TARGETS_MS.SIGTERM;

/** What the scenario needs from a lock backend. */
export interface LeaseBackend {
  /** `file` or `kubernetes`: for test names and the results file. */
  kind: string;
  /** Environment of every replica (lock selection, kubeconfig, namespace, lease name). */
  env: Record<string, string | undefined>;
  /** The Lease record as stored, read independently of the replicas. */
  readLease(): Promise<{ holderIdentity: string; leaseTransitions: number } | undefined>;
  /** Extra checks after the first leader is known (e.g. which lock the replicas chose). */
  verifyBackend?(fleet: ReplicaFleet): Promise<void>;
  /**
   * Kubernetes only: checks the Event recorded on the Lease for `leader`'s first term. Absent
   * for a file lock, which has no Lease object to put Events on.
   */
  verifyEvents?(leader: string): Promise<void>;
  /** Cleanup after the scenario (RBAC objects, temp dirs). */
  dispose?(): Promise<void>;
}

/**
 * Registers the scenario as a `describe` block. `prepare` runs in `before` and returns the
 * backend (with a unique Lease name in its env).
 */
export function describeFailoverScenario(
  title: string,
  prepare: (leaseName: string) => Promise<LeaseBackend>,
): void {
  describe(title, { timeout: 180_000 }, () => {
    const run = randomBytes(3).toString('hex');
    const leaseName = `demo-e2e-${run}`;
    let backend: LeaseBackend;
    let fleet: ReplicaFleet;
    let startedAt: number;
    let leader: ReplicaProcess;
    const measurements: FailoverMeasurement[] = [];

    before(async () => {
      backend = await prepare(leaseName);
      fleet = new ReplicaFleet({
        identity: (i) => `e2e-${run}-${i + 1}`,
        env: {
          LEASE_NAME: leaseName,
          LEASE_DURATION_SECONDS: String(E2E_TIMINGS.leaseDurationSeconds),
          RENEW_DEADLINE_SECONDS: String(E2E_TIMINGS.renewDeadlineSeconds),
          RETRY_PERIOD_SECONDS: String(E2E_TIMINGS.retryPeriodSeconds),
          ...backend.env,
        },
      });
      await fleet.start(3);
      startedAt = performance.now();
    });

    after(async () => {
      fleet?.kill();
      await Promise.all(fleet?.history.map((r) => r.exited) ?? []);
      await backend?.dispose?.();
      if (measurements.length > 0) {
        const line = measurements.map((m) => ({
          backend: backend.kind,
          signal: m.signal,
          acquiredMs: Math.round(m.acquiredMs),
          firstWorkMs: Math.round(m.firstWorkMs),
          issueTargetMs: ISSUE_TARGETS_MS[m.signal as keyof typeof ISSUE_TARGETS_MS],
        }));
        process.stdout.write(`# failover ${JSON.stringify(line)}\n`);
      }
    });

    it('elects exactly one leader within one leaseDuration', async () => {
      const acquired = await fleet.waitForLeader({ timeoutMs: leaseDurationMs });
      leader = acquired.replica;
      assert.ok(acquired.receivedAt - startedAt <= leaseDurationMs);
      const statuses = await eventually(
        async () => {
          const all = await Promise.all(fleet.replicas.map((r) => r.leaderStatus()));
          assert.ok(
            all.every((s): s is LeaderStatus => s !== undefined),
            'every replica answers GET /leader',
          );
          assert.deepEqual(
            all.map((s) => s.name),
            all.map(() => leader.identity),
            'every replica sees the same leader',
          );
          return all;
        },
        { timeoutMs: 3 * retryPeriodSeconds * 1000 },
      );
      assert.deepEqual(
        statuses.map((s) => s.isLeader),
        fleet.replicas.map((r) => r === leader),
      );
      assert.deepEqual(
        statuses.map((s) => s.identity),
        fleet.replicas.map((r) => r.identity),
      );
      const acquisitions = fleet.events().filter((e) => e.event.event === 'leadership-acquired');
      assert.equal(acquisitions.length, 1, 'one leadership-acquired line in all the logs');
    });

    it('runs the cron, the interval and leader-only HTTP on the leader only', async () => {
      // Both scheduled tasks run on the leader (cron every 2 s, interval every 1 s).
      for (const task of ['dispatch-jobs', 'reconcile']) {
        await leader.waitForEvent((e) => e.event === 'leader-work' && e.task === task, {
          timeoutMs: 5000,
          description: `${task} on ${leader.identity}`,
        });
      }
      const followers = fleet.replicas.filter((r) => r !== leader);
      for (const follower of followers) {
        const response = await follower.request('/jobs/dispatch', { method: 'POST' });
        assert.equal(response.status, 503, `POST /jobs/dispatch on follower ${follower.identity}`);
        assert.ok(Number(response.headers.get('retry-after')) > 0, 'Retry-After on a 503');
        assert.equal((response.body as { leader: string }).leader, leader.identity);
      }
      const dispatched = await leader.request('/jobs/dispatch', { method: 'POST' });
      assert.equal(dispatched.status, 202);
      assert.equal((dispatched.body as { task: string }).task, 'dispatch-jobs-http');
      const workers = new Set(fleet.leaderWork().map((w) => w.identity));
      assert.deepEqual(
        [...workers],
        [leader.identity],
        'leader-work lines come from the leader only',
      );
    });

    it('is ready on the leader only and live everywhere', async () => {
      for (const replica of fleet.replicas) {
        const ready = await replica.request('/readyz');
        const live = await replica.request('/healthz');
        assert.equal(
          ready.status,
          replica === leader ? 200 : 503,
          `/readyz on ${replica.identity}`,
        );
        assert.equal(live.status, 200, `/healthz on ${replica.identity}`);
      }
    });

    it("writes the leader's identity to the Lease", async () => {
      const lease = await backend.readLease();
      assert.equal(lease?.holderIdentity, leader.identity);
      await backend.verifyBackend?.(fleet);
      await backend.verifyEvents?.(leader.identity);
    });

    it('serves metrics on every replica: the leader alone reports leading', async () => {
      for (const replica of fleet.running) {
        const metrics = await scrapeReplica(replica.port, 5_000);
        assert.ok(metrics, `GET /metrics on ${replica.identity}`);
        const own = replica === leader ? 1 : 0;
        assert.equal(metrics.get('default')?.masterStatus, own, `${replica.identity} default`);
        assert.equal(metrics.get('default')?.termsStarted, own, `${replica.identity} terms`);
      }
    });

    it('fails over after SIGKILL of the leader: the Lease expires, another replica takes over', async () => {
      const before = (await backend.readLease())!;
      const failover = await fleet.failover('SIGKILL', KILL_FIRST_WORK_BOUND_MS + 10_000);
      measurements.push(failover);
      recordFailover(backend.kind, failover, E2E_TIMINGS, ISSUE_TARGETS_MS.SIGKILL);
      assert.equal(failover.exit.signal, 'SIGKILL');
      assert.ok(
        failover.firstWorkMs <= KILL_FIRST_WORK_BOUND_MS,
        `first leader-work of the new leader ${Math.round(failover.firstWorkMs)} ms after the kill (bound ${KILL_FIRST_WORK_BOUND_MS} ms)`,
      );
      assert.equal(failover.leaseTransitions, before.leaseTransitions + 1);
      const lease = await backend.readLease();
      assert.equal(lease?.holderIdentity, failover.to);
      assert.equal(lease?.leaseTransitions, before.leaseTransitions + 1);
      leader = fleet.replicas.find((r) => r.identity === failover.to)!;
    });

    it('fails over after SIGTERM of the leader within a retry wait: the Lease is released', async () => {
      const before = (await backend.readLease())!;
      const old = leader;
      const failover = await fleet.failover('SIGTERM', GRACEFUL_ACQUIRE_BOUND_MS + 10_000);
      measurements.push(failover);
      recordFailover(backend.kind, failover, E2E_TIMINGS, ISSUE_TARGETS_MS.SIGTERM);
      assert.equal(failover.exit.code, 0, 'the old leader shut down completely');
      assert.ok(
        failover.acquiredMs <= GRACEFUL_ACQUIRE_BOUND_MS,
        `new leader ${Math.round(failover.acquiredMs)} ms after SIGTERM (bound ${GRACEFUL_ACQUIRE_BOUND_MS} ms)`,
      );
      // Released, not expired: the old leader ended its term before the new one began.
      const lost = old.events.find(
        (e) =>
          e.event.event === 'leadership-lost' &&
          e.event.leaseTransitions === before.leaseTransitions,
      );
      const acquired = fleet
        .events()
        .find(
          (e): e is typeof e & { event: LeadershipAcquiredEvent } =>
            e.event.event === 'leadership-acquired' &&
            e.event.identity === failover.to &&
            e.event.leaseTransitions === failover.leaseTransitions,
        );
      assert.ok(lost && acquired && lost.receivedAt <= acquired.receivedAt);
      assert.equal(failover.leaseTransitions, before.leaseTransitions + 1);
      const lease = await backend.readLease();
      assert.equal(lease?.holderIdentity, failover.to);
      assert.equal(lease?.leaseTransitions, before.leaseTransitions + 1);
    });

    it('a leader paused past its lease (SIGSTOP) is replaced and does no leader work on waking', async () => {
      const paused = fleet.leader()!.replica;
      // Bring the stopped replicas back (same identity and port, as restarted pods) as followers.
      for (const [index, replica] of fleet.replicas.entries()) {
        if (!replica.running) await fleet.restart(index);
      }
      const stoppedAt = paused.kill('SIGSTOP');
      const acquired = await fleet.waitForEvent(
        (e, replica) => e.event === 'leadership-acquired' && replica !== paused,
        {
          timeoutMs: KILL_FIRST_WORK_BOUND_MS + 5_000,
          since: stoppedAt,
          description: `a new leader while ${paused.identity} is stopped`,
        },
      );
      const resumedAt = paused.kill('SIGCONT');

      // Its timers fire late on waking; every gate re-checks the deadline and skips.
      const lost = await fleet.waitForEvent(
        (e, replica) => e.event === 'leadership-lost' && replica === paused,
        { timeoutMs: 5_000, since: resumedAt, description: `${paused.identity} to step down` },
      );
      await new Promise((r) => setTimeout(r, 2 * RECONCILE_INTERVAL_MS + 500));
      const lateWork = paused.events.filter(
        (e) => e.event.event === 'leader-work' && e.receivedAt >= resumedAt,
      );
      assert.deepEqual(
        lateWork.map((e) => e.event),
        [],
      );
      assert.ok(lost.receivedAt >= resumedAt);
      const status = await paused.leaderStatus();
      assert.equal(status?.isLeader, false);
      assert.equal(status?.name, acquired.replica.identity);
      const lease = await backend.readLease();
      assert.equal(lease?.holderIdentity, acquired.replica.identity);
    });

    it('never ran leader-only work in two overlapping terms', () => {
      const work = fleet.leaderWork();
      const { terms, violations } = checkLeaderTerms(work);
      assert.deepEqual(violations, []);
      assert.equal(
        terms.length,
        4,
        `terms: first leader, after SIGKILL, SIGTERM, SIGSTOP; got ${JSON.stringify(terms)}`,
      );
      assert.deepEqual(
        terms.map((t) => t.identities.length),
        [1, 1, 1, 1],
      );
    });

    it('ran the sharded reconciler on a Lease lock, every shard in terms that never overlap, and said sharding is off on a file lock', () => {
      const work = fleet.shardWork();
      const started = fleet
        .events()
        .map((e) => e.event)
        .filter((e) => e.event === 'replica-started');
      if (backend.kind === 'file') {
        assert.equal(work.length, 0, 'no shard-work without a Lease');
        assert.ok(
          started.every((e) => e.shards === 0),
          'every replica started with sharding off',
        );
        const off = fleet
          .events()
          .map((e) => e.event)
          .filter((e) => e.event === 'sharding-off');
        assert.equal(off.length, started.length, 'a sharding-off line per replica');
        return;
      }
      assert.ok(started.every((e) => e.shards === ORDER_SHARDS));
      const { terms, violations } = checkShardTerms(work);
      assert.deepEqual(violations, []);
      assert.deepEqual(
        [...terms.keys()],
        Array.from({ length: ORDER_SHARDS }, (_, shard) => shard),
        'every shard ran',
      );
    });
  });
}
