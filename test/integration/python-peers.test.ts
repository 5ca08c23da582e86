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
import { CandidateProcess, type CandidateEvent } from '../support/candidate-process.js';
import { leadershipIntervals, overlappingIntervals } from '../support/leadership-timeline.js';
import { recordLockHistory } from '../support/lock-history.js';
import type { TestLockKind } from '../support/kubernetes-locks.js';
import { monotonicNowMs } from '../support/monotonic-time.js';
import { eventually, found } from '../support/eventually.js';

const cluster = getTestCluster();
const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;
const leaseDurationMs = leaseDurationSeconds * 1000;
const retryPeriodMs = retryPeriodSeconds * 1000;
type PeerKind = 'nest-leader' | 'python';
/** nest-leader candidates authenticate as alice, Python ones as carol. */
const KUBECONFIG: Record<PeerKind, string> = {
  'nest-leader': cluster.identities.alice!.kubeconfigPath,
  python: cluster.identities.carol!.kubeconfigPath,
};

/**
 * Bounds from a kill to the next leader's first `started` line:
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
    const peers: CandidateProcess[] = [];
    let history: ReturnType<typeof recordLockHistory>;
    const handovers: Handover[] = [];
    let serial = 0;

    before(
      async () => {
        await ensurePythonClient();
        for (const identity of ['alice', 'carol']) await grant(cluster, identity);
        history = recordLockHistory(kubeConfigFor(cluster), lock, name, cluster.namespace);
      },
      { timeout: 600_000 },
    );

    after(async () => {
      await Promise.all(peers.map((p) => p.dispose()));
      await history?.stop();
      for (const identity of ['alice', 'carol']) await revoke(cluster, identity);
      if (handovers.length > 0) {
        process.stdout.write(
          `# python peers (${lock}, ${pinnedPythonClient()}): ${JSON.stringify(handovers.map(({ from, to, signal, ms }) => ({ from, to, signal, ms: Math.round(ms) })))}\n`,
        );
      }
    });

    const startPeer = async (kind: PeerKind): Promise<CandidateProcess> => {
      return CandidateProcess.startReady(
        {
          implementation: kind,
          kubeconfigPath: KUBECONFIG[kind],
          lock,
          leaseName: name,
          namespace: cluster.namespace,
          identity: `${kind === 'python' ? 'py' : 'nl'}-${++serial}`,
          timings: FAST_TIMINGS,
          releaseOnCancel: kind === 'nest-leader',
        },
        peers,
      );
    };
    /** Peers not killed and not exited. */
    const alive = () => peers.filter((p) => !p.killed && !p.exitStatus);
    const leading = (p: CandidateProcess) =>
      leadershipIntervals([p]).some((i) => i.endedBy === 'still-leading');
    const overlaps = () => overlappingIntervals(leadershipIntervals(peers));
    /** The first `started` of any peer but `except` after `afterMs` (CLOCK_MONOTONIC). */
    const nextLeader = (
      afterMs: number,
      timeoutMs: number,
      except?: CandidateProcess,
    ): Promise<[CandidateProcess, CandidateEvent]> =>
      Promise.any(
        peers
          .filter((p) => p !== except)
          .map(async (p) => {
            const started = await p.waitFor(
              (e) => e.event === 'started' && e.monotonicMs >= afterMs,
              timeoutMs,
            );
            return [p, started] as [CandidateProcess, CandidateEvent];
          }),
      ).catch(() => {
        throw new Error(`no new leader within ${timeoutMs} ms\n${describePeers(peers)}`);
      });

    test('two candidates of each kind elect exactly one leader, and it stays', async () => {
      await Promise.all([
        startPeer('python'),
        startPeer('nest-leader'),
        startPeer('python'),
        startPeer('nest-leader'),
      ]);
      const [leader] = await nextLeader(0, 2 * leaseDurationMs, undefined);
      await new Promise((r) => setTimeout(r, 2 * leaseDurationMs));
      const starts = peers.flatMap((p) => p.eventsWhere((e) => e.event === 'started'));
      assert.equal(starts.length, 1, `one started line in all:\n${describePeers(peers)}`);
      assert.equal(history.changes.at(-1)?.holderIdentity, leader.identity);
      assert.deepEqual(overlaps(), []);
    });

    test(
      'leaders of each kind are killed; handovers go both ways, never two leaders',
      {
        timeout: 240_000,
      },
      async () => {
        const leaderNow = () => alive().find(leading)!;
        const kindOf = (p: CandidateProcess) => p.implementation as PeerKind;
        const first = leaderNow();
        assert.ok(first, 'a leader from the previous test');
        // Start the cycle at the kind that leads now; run it twice (8 handovers).
        const start = CYCLE.findIndex((c) => c.from === kindOf(first));
        const cycle = [...CYCLE.slice(start), ...CYCLE.slice(0, start)];
        const rounds = [...cycle, ...cycle];
        for (const { from, signal } of rounds) {
          const leader = leaderNow();
          assert.equal(
            leader && kindOf(leader),
            from,
            `the leader is ${from}:\n${describePeers(peers)}`,
          );
          const paused = alive().filter((p) => p !== leader && kindOf(p) === from);
          for (const p of paused) p.pause();
          const transitionsBefore = history.changes.at(-1)?.transitions;
          const killedAt = monotonicNowMs();
          leader.kill(signal);
          const [next, started] = await nextLeader(killedAt, CRASH_BOUND_MS + 10_000, leader);
          for (const p of paused) p.resume();
          await leader.exited;
          const ms = started.monotonicMs - killedAt;
          assert.equal(kindOf(next), other(from), `handover from ${from} went to ${kindOf(next)}`);
          const released = signal === 'SIGTERM' && from === 'nest-leader';
          const bound = released ? RELEASE_BOUND_MS : CRASH_BOUND_MS;
          assert.ok(
            ms <= bound,
            `${from} ${signal} → ${kindOf(next)} took ${Math.round(ms)} ms (bound ${bound} ms)`,
          );
          if (!released) assert.ok(ms >= leaseDurationMs - retryPeriodMs, 'waited for expiry');
          const written = await eventually(
            () =>
              found(
                history.changes.find(
                  (c) => c.atMs >= killedAt && c.holderIdentity === next.identity,
                ),
                () =>
                  `the stored record never named ${next.identity}: ${JSON.stringify(history.changes)} (polls: ${JSON.stringify(history.counts)})`,
              ),
            { timeoutMs: 3000, intervalMs: 50 },
          );
          handovers.push({
            from,
            to: kindOf(next),
            signal,
            ms,
            transitionsBefore,
            transitionsAfter: written.transitions,
          });
          await startPeer(from);
        }
        assert.deepEqual(overlaps(), [], `never two leaders:\n${describePeers(peers)}`);
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

/** Events and log tails of every peer, for assertion messages. */
function describePeers(peers: readonly CandidateProcess[]): string {
  return peers
    .map((p) => {
      const events = p.events.map((e) => `${e.event}@${Math.round(e.monotonicMs)}`).join(' ');
      const tail = p.stderrTail.trimEnd().split('\n').slice(-8);
      return `${p.describe()}: ${events}\n${tail.map((l) => `    ${l}`).join('\n')}`;
    })
    .join('\n');
}

describeMixedFleet('lease');
describeMixedFleet('configmap');
