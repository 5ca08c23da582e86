/**
 * nest-leader next to the official Python `kubernetes` client's `kubernetes.leaderelection`
 * (installed from PyPI, pinned in test/python/requirements.txt) on one lock of the real
 * kube-apiserver: two candidates of each kind as real OS processes. Leaders of each kind are
 * killed (SIGKILL, and SIGTERM: nest-leader releases, Python cannot) and the handovers go both
 * ways; no two processes ever believe they lead at once.
 *
 * To force the direction of a handover, the other followers of the leader's own kind are
 * paused (SIGSTOP) while it is killed and resumed (SIGCONT) once the other kind leads; the
 * killed candidate is replaced by a new process, so the fleet stays two plus two.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getTestCluster, kubeConfigFor, uniqueLeaseName } from '../support/cluster.js';
import { FAST_TIMINGS, summarize } from '../support/candidates.js';
import {
  grantConfigMapAccess,
  grantLeaseAccess,
  revokeConfigMapAccess,
  revokeLeaseAccess,
} from '../support/rbac.js';
import { ensurePythonClient, pinnedPythonClient } from '../support/python-client.js';
import { type Peer, PeerFleet, type PeerKind } from '../support/peer-fleet.js';
import { recordLockHistory, type StoredRecord } from '../support/lock-history.js';
import type { TestLockKind } from '../support/kubernetes-locks.js';

const cluster = getTestCluster();
const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;
const leaseDurationMs = leaseDurationSeconds * 1000;
const retryPeriodMs = retryPeriodSeconds * 1000;
/** nest-leader candidates authenticate as alice, Python ones as carol. */
const KUBECONFIG: Record<PeerKind, string> = {
  'nest-leader': cluster.identities.alice!.kubeconfigPath,
  python: cluster.identities.carol!.kubeconfigPath,
};

/**
 * Bounds from a kill to the next leader's first `started-leading` line:
 * - crash, or Python stopped (it never releases): the follower's observation of the last
 *   renewal lags it by up to one poll (Python polls every retryPeriod plus two requests), it
 *   waits leaseDuration from there and notices at its next poll: leaseDuration + 2 × retryPeriod
 *   plus 1 s of process and pipe latency on a loaded machine.
 * - nest-leader stopped with SIGTERM: it releases; the follower takes the free lock at its
 *   next poll: retryPeriod × 1.2 (nest-leader) or retryPeriod + a request (Python), plus 1 s.
 */
const CRASH_BOUND_MS = leaseDurationMs + 2 * retryPeriodMs + 1000;
const RELEASE_BOUND_MS = 1.2 * retryPeriodMs + 1000;

interface Handover {
  from: PeerKind;
  to: PeerKind;
  signal: 'SIGKILL' | 'SIGTERM';
  ms: number;
  /** transitions stored before the kill and after the new leader wrote. */
  transitionsBefore: number | undefined;
  transitionsAfter: number | undefined;
}

/** Handovers of one cycle: each starts from the kind the previous one ended with. */
const CYCLE: { from: PeerKind; signal: 'SIGKILL' | 'SIGTERM' }[] = [
  { from: 'python', signal: 'SIGKILL' },
  { from: 'nest-leader', signal: 'SIGKILL' },
  { from: 'python', signal: 'SIGTERM' },
  { from: 'nest-leader', signal: 'SIGTERM' },
];

const other = (kind: PeerKind): PeerKind => (kind === 'python' ? 'nest-leader' : 'python');

function describeMixedFleet(lock: TestLockKind): void {
  const grant = lock === 'lease' ? grantLeaseAccess : grantConfigMapAccess;
  const revoke = lock === 'lease' ? revokeLeaseAccess : revokeConfigMapAccess;
  describe(`Python kubernetes.leaderelection and nest-leader on one ${lock}`, () => {
    const name = uniqueLeaseName(`py-${lock}`);
    let fleet: PeerFleet;
    let history: ReturnType<typeof recordLockHistory>;
    const handovers: Handover[] = [];
    let serial = 0;

    before(
      async () => {
        const python = await ensurePythonClient();
        for (const identity of ['alice', 'carol']) await grant(cluster, identity);
        fleet = new PeerFleet({
          lock,
          name,
          namespace: cluster.namespace,
          timings: FAST_TIMINGS,
          python,
        });
        history = recordLockHistory(kubeConfigFor(cluster), lock, name, cluster.namespace);
      },
      { timeout: 600_000 },
    );

    after(async () => {
      await fleet?.killAll();
      await history?.stop();
      for (const identity of ['alice', 'carol']) await revoke(cluster, identity);
      if (handovers.length > 0) {
        process.stdout.write(
          `# python peers (${lock}, ${pinnedPythonClient()}): ${JSON.stringify(handovers.map(({ from, to, signal, ms }) => ({ from, to, signal, ms: Math.round(ms) })))}\n`,
        );
      }
    });

    const startPeer = (kind: PeerKind): Promise<Peer> =>
      fleet.start(kind, `${kind === 'python' ? 'py' : 'nl'}-${++serial}`, KUBECONFIG[kind]);

    test('two candidates of each kind elect exactly one leader, and it stays', async () => {
      await Promise.all([
        startPeer('python'),
        startPeer('nest-leader'),
        startPeer('python'),
        startPeer('nest-leader'),
      ]);
      const [leader] = await fleet.nextLeader(0, 2 * leaseDurationMs, undefined);
      await new Promise((r) => setTimeout(r, 2 * leaseDurationMs));
      const starts = fleet.peers.flatMap((p) =>
        p.events.filter((e) => e.event === 'started-leading'),
      );
      assert.equal(starts.length, 1, `one started-leading line in all:\n${fleet.describe()}`);
      assert.equal(history.changes.at(-1)?.holderIdentity, leader.identity);
      assert.deepEqual(fleet.overlaps(), []);
    });

    test(
      'leaders of each kind are killed; handovers go both ways, never two leaders',
      {
        timeout: 240_000,
      },
      async () => {
        const leaderNow = () => fleet.alive.find((p) => p.leading)!;
        const first = leaderNow();
        assert.ok(first, 'a leader from the previous test');
        // Start the cycle at the kind that leads now; run it twice (8 handovers).
        const start = CYCLE.findIndex((c) => c.from === first.kind);
        const cycle = [...CYCLE.slice(start), ...CYCLE.slice(0, start)];
        const rounds = [...cycle, ...cycle];
        for (const { from, signal } of rounds) {
          const leader = leaderNow();
          assert.equal(leader?.kind, from, `the leader is ${from}:\n${fleet.describe()}`);
          const paused = fleet.alive.filter((p) => p !== leader && p.kind === from);
          for (const p of paused) p.kill('SIGSTOP');
          const transitionsBefore = history.changes.at(-1)?.transitions;
          const killedAt = performance.now();
          leader.kill(signal);
          const [next, started] = await fleet.nextLeader(killedAt, CRASH_BOUND_MS + 10_000, leader);
          for (const p of paused) p.kill('SIGCONT');
          await leader.exited;
          const ms = started.atMs - killedAt;
          assert.equal(next.kind, other(from), `handover from ${from} went to ${next.kind}`);
          const released = signal === 'SIGTERM' && from === 'nest-leader';
          const bound = released ? RELEASE_BOUND_MS : CRASH_BOUND_MS;
          assert.ok(
            ms <= bound,
            `${from} ${signal} → ${next.kind} took ${Math.round(ms)} ms (bound ${bound} ms)`,
          );
          if (!released) assert.ok(ms >= leaseDurationMs - retryPeriodMs, 'waited for expiry');
          const written = await waitForHolder(history.changes, next.identity, killedAt);
          handovers.push({
            from,
            to: next.kind,
            signal,
            ms,
            transitionsBefore,
            transitionsAfter: written.transitions,
          });
          await startPeer(from);
        }
        assert.deepEqual(fleet.overlaps(), [], `never two leaders:\n${fleet.describe()}`);
        for (const to of ['python', 'nest-leader'] as const) {
          const times = handovers.filter((h) => h.to === to).map((h) => h.ms);
          process.stdout.write(
            `# handovers to ${to} (${lock}): ${JSON.stringify(summarize(times))}\n`,
          );
        }
      },
    );

    test('only nest-leader counts transitions; Python keeps (Lease) or drops (ConfigMap) the counter', () => {
      assert.ok(handovers.length >= 8);
      for (const h of handovers) {
        if (h.to === 'nest-leader') {
          // After a Python ConfigMap holder the counter is gone and restarts from 0 + 1.
          assert.equal(h.transitionsAfter, (h.transitionsBefore ?? 0) + 1, JSON.stringify(h));
        } else if (lock === 'lease') {
          assert.equal(h.transitionsAfter, h.transitionsBefore, JSON.stringify(h));
        } else {
          assert.equal(
            h.transitionsAfter,
            undefined,
            `Python drops leaderTransitions: ${JSON.stringify(h)}`,
          );
        }
      }
    });
  });
}

/** The first stored record after `sinceMs` naming `holder` (polled; up to 3 s). */
async function waitForHolder(
  changes: StoredRecord[],
  holder: string,
  sinceMs: number,
): Promise<StoredRecord> {
  const deadline = performance.now() + 3000;
  for (;;) {
    const found = changes.find((c) => c.atMs >= sinceMs && c.holderIdentity === holder);
    if (found) return found;
    if (performance.now() > deadline) {
      throw new Error(`the stored record never named ${holder}: ${JSON.stringify(changes)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeMixedFleet('lease');
describeMixedFleet('configmap');
