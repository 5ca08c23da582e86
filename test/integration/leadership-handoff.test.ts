/**
 * Targeted handoff (`LeaderElector.transferLeadership`) between real OS processes on the real
 * kube-apiserver, with client-go's own elector on the same Lease: the target takes the Lease at
 * once; a dead target costs exactly the bound; a client-go candidate never takes a Lease
 * reserved for someone else, takes it after the bound like an expired one, and — named as the
 * target — leads at once. Never two leaders (both sides' event logs and samples of the Lease);
 * leaseTransitions never go down and every term's fencing token is above the previous one's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HANDOFF_ANNOTATION } from 'nest-leader/core';
import { coordinationApi, getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { ELECTOR_VERBS, grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import {
  buildClientGoCandidate,
  type CandidateEvent,
  CandidateProcess,
  type Implementation,
  leaseTarget,
} from '../support/candidate-process.js';
import { eventually } from '../support/eventually.js';
import { assertSingleLeader, LeaseSampler } from '../support/leadership-timeline.js';

const cluster = getTestCluster();
const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;
const LEASE_MS = leaseDurationSeconds * 1000;
const RETRY_MS = retryPeriodSeconds * 1000;
/** Request latency and process scheduling on a loaded 2-core machine. */
const SLACK_MS = 1000;
const USER: Record<Implementation, string> = { 'client-go': 'alice', 'nest-leader': 'bob' };

describe(
  'targeted handoff between real processes (real kube-apiserver)',
  { timeout: 180_000 },
  () => {
    const processes: CandidateProcess[] = [];
    const samplers: LeaseSampler[] = [];

    before(async () => {
      for (const user of Object.values(USER)) await grantLeaseAccess(cluster, user, ELECTOR_VERBS);
      await buildClientGoCandidate();
    });
    after(async () => {
      await Promise.all(samplers.map((s) => s.stop()));
      await Promise.all(processes.map((p) => p.dispose()));
      for (const user of Object.values(USER)) await revokeLeaseAccess(cluster, user);
    });

    async function spawn(
      implementation: Implementation,
      leaseName: string,
      identity: string,
    ): Promise<CandidateProcess> {
      return CandidateProcess.startReady(
        {
          implementation,
          ...leaseTarget(cluster, USER[implementation], leaseName),
          identity,
          timings: FAST_TIMINGS,
        },
        processes,
      );
    }

    /** Starts `leader` first (it creates the Lease), then the others, who see it lead. */
    async function election(leaseName: string, members: [Implementation, string][]) {
      const sampler = new LeaseSampler(coordinationApi(cluster), leaseName, cluster.namespace);
      samplers.push(sampler);
      const [first, ...rest] = members;
      const leader = await spawn(first![0], leaseName, first![1]);
      await leader.waitFor((e) => e.event === 'started', LEASE_MS + 3 * RETRY_MS, 'started');
      const others: CandidateProcess[] = [];
      for (const [implementation, identity] of rest) {
        const other = await spawn(implementation, leaseName, identity);
        await other.waitFor(
          (e) => e.event === 'new-leader' && e.leader === leader.identity,
          LEASE_MS + 3 * RETRY_MS,
          `new-leader ${leader.identity}`,
        );
        others.push(other);
      }
      return { sampler, leader, others };
    }

    /** Orders `from` to hand its term to `to`; resolves its `handed-off` event and the order time. */
    async function handOff(from: CandidateProcess, to: string, bound?: number) {
      const orderedMs = from.transferLeadership(from.identity, to, bound);
      const written = await from.waitFor(
        (e) =>
          (e.event === 'handed-off' || e.event === 'handoff-failed') && e.monotonicMs > orderedMs,
        10_000,
        'the handoff written',
      );
      assert.equal(written.event, 'handed-off', written.reason);
      return { orderedMs, written };
    }

    function startedAfter(candidate: CandidateProcess, ms: number, timeoutMs: number) {
      return candidate.waitFor(
        (e) => e.event === 'started' && e.monotonicMs > ms,
        timeoutMs,
        `started after ${Math.round(ms)}`,
      );
    }

    function startsBetween(fromMs: number, toMs: number, leaseName: string): CandidateEvent[] {
      return processes
        .filter((p) => p.leaseName === leaseName)
        .flatMap((p) => p.eventsWhere((e) => e.event === 'started'))
        .filter((e) => e.monotonicMs > fromMs && e.monotonicMs < toMs);
    }

    /** Never two leaders; the Lease never contradicts a leader; leaseTransitions never go down. */
    async function assertSafe(leaseName: string, sampler: LeaseSampler) {
      await sampler.stop();
      const mine = processes.filter((p) => p.leaseName === leaseName);
      const intervals = assertSingleLeader(mine, sampler);
      await Promise.all(mine.map((p) => p.dispose()));
      return intervals;
    }

    /** leaseTransitions of the Lease while `holder` held it, from the samples (one value). */
    function tokenOf(sampler: LeaseSampler, holder: string): number[] {
      return [
        ...new Set(
          sampler.samples
            .filter((s) => s.holderIdentity === holder)
            .map((s) => s.leaseTransitions!),
        ),
      ];
    }

    /** ts-1 leads, ts-2 (the target) and ts-3 (a bystander) follow it. */
    async function threeNestLeaders(leaseName: string) {
      const { sampler, leader, others } = await election(leaseName, [
        ['nest-leader', 'ts-1'],
        ['nest-leader', 'ts-2'],
        ['nest-leader', 'ts-3'],
      ]);
      const [target, bystander] = others as [CandidateProcess, CandidateProcess];
      const leaderTerm = leader.events.find((e) => e.event === 'started')!.leaseTransitions!;
      return { sampler, leader, target, bystander, leaderTerm };
    }

    test('the target takes the Lease at once, with the next term; nobody else starts; gap measured', async () => {
      const leaseName = uniqueLeaseName('handoff');
      const { sampler, leader, target, bystander, leaderTerm } = await threeNestLeaders(leaseName);

      const { orderedMs, written } = await handOff(leader, target.identity);
      const started = await startedAfter(target, orderedMs, RETRY_MS + SLACK_MS + 2000);
      const stopped = leader.events.find((e) => e.event === 'stopped')!;

      assert.equal(started.reason, 'handoff');
      assert.equal(written.leaseTransitions, leaderTerm);
      // The handoff record is the leader's term + 1, and the target's term keeps it: one handover,
      // one transition.
      assert.equal(started.leaseTransitions, leaderTerm + 1);
      // The sampler reads every ~20 ms: wait for a sample of the target's term (under load the
      // `started` line can arrive before one), then only that token may ever have been seen.
      await eventually(
        () => assert.deepEqual(tokenOf(sampler, target.identity), [leaderTerm + 1]),
        { timeoutMs: 5000, intervalMs: 50 },
      );
      assert.deepEqual(
        startsBetween(orderedMs, started.monotonicMs + 3 * RETRY_MS, leaseName).map(
          (e) => e.identity,
        ),
        [target.identity],
        'only the target started',
      );
      assert.equal(bystander.eventsWhere((e) => e.event === 'started').length, 0);
      const gapMs = started.monotonicMs - stopped.monotonicMs;
      console.log(
        `# handoff: leaderless ${Math.round(gapMs)} ms (term end → target's start); order → start ` +
          `${Math.round(started.monotonicMs - orderedMs)} ms`,
      );
      assert.ok(gapMs >= 0 && gapMs < 1.2 * RETRY_MS + SLACK_MS, `gap ${gapMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 2 * RETRY_MS)); // the target renews
      await assertSafe(leaseName, sampler);
    });

    test('a dead target: nobody leads until the bound has passed, then another candidate takes it', async () => {
      const leaseName = uniqueLeaseName('handoff-dead');
      const { sampler, leader, target, bystander, leaderTerm } = await threeNestLeaders(leaseName);
      target.kill('SIGKILL');
      await target.exited;
      // Shorter than leaseDuration (4 s), its maximum: the bound, not leaseDuration, counts.
      const boundSeconds = 3;

      const { orderedMs, written } = await handOff(leader, target.identity, boundSeconds);
      const next = await Promise.race([
        startedAfter(leader, orderedMs, boundSeconds * 1000 + 4 * RETRY_MS + SLACK_MS),
        startedAfter(bystander, orderedMs, boundSeconds * 1000 + 4 * RETRY_MS + SLACK_MS),
      ]);

      // Nobody saw the handoff before it was written, after the order: none may start before
      // order + bound. Everyone saw it by its `handed-off` event plus one retry period.
      assert.ok(
        next.monotonicMs >= orderedMs + boundSeconds * 1000,
        `${next.identity} started ${Math.round(next.monotonicMs - orderedMs)} ms after the order`,
      );
      assert.ok(
        next.monotonicMs <= written.monotonicMs + boundSeconds * 1000 + 1.2 * RETRY_MS + SLACK_MS,
        `${next.identity} started ${Math.round(next.monotonicMs - written.monotonicMs)} ms after the handoff`,
      );
      assert.equal(next.reason, 'expired');
      assert.equal(next.leaseTransitions, leaderTerm + 2);
      assert.deepEqual(tokenOf(sampler, target.identity), [leaderTerm + 1]);
      console.log(
        `# dead target (bound ${boundSeconds} s): ${next.identity} took it ` +
          `${Math.round(next.monotonicMs - written.monotonicMs)} ms after the handoff`,
      );
      await new Promise((resolve) => setTimeout(resolve, 2 * RETRY_MS));
      const intervals = await assertSafe(leaseName, sampler);
      assert.deepEqual(
        intervals.map((i) => i.identity),
        [leader.identity, next.identity],
      );
    });

    test('client-go on the same Lease: waits out a handoff to another, leads at once as the target, takes a released Lease, and a reserved one only after the bound', async () => {
      const leaseName = uniqueLeaseName('handoff-go');
      const { sampler, leader, others } = await election(leaseName, [
        ['nest-leader', 'ts-1'],
        ['nest-leader', 'ts-2'],
        ['client-go', 'go-1'],
      ]);
      const [second, go1] = others as [CandidateProcess, CandidateProcess];
      const firstTerm = leader.events.find((e) => e.event === 'started')!.leaseTransitions!;

      // 1. ts-1 → ts-2 with client-go watching: ts-2 leads at once; client-go sees a new holder.
      const first = await handOff(leader, second.identity);
      const secondStarted = await startedAfter(second, first.orderedMs, RETRY_MS + SLACK_MS + 2000);
      assert.equal(secondStarted.reason, 'handoff');
      await go1.waitFor(
        (e) => e.event === 'new-leader' && e.leader === second.identity,
        LEASE_MS,
        'client-go sees ts-2 lead',
      );
      assert.equal(go1.eventsWhere((e) => e.event === 'started').length, 0);

      // 2. ts-2 → go-1: client-go finds its own identity as holder and leads at its next retry,
      //    keeping the handoff's leaseTransitions.
      const toGo = await handOff(second, go1.identity);
      const goStarted = await startedAfter(go1, toGo.orderedMs, 2.2 * RETRY_MS + 2 * SLACK_MS);
      console.log(
        `# handoff to client-go: it led ${Math.round(goStarted.monotonicMs - toGo.written.monotonicMs)} ms after the handoff`,
      );
      await new Promise((resolve) => setTimeout(resolve, 2 * RETRY_MS)); // it renews
      assert.deepEqual(tokenOf(sampler, go1.identity), [secondStarted.leaseTransitions! + 1]);

      // 3. go-1 is SIGTERMed: it releases; a nest-leader candidate takes the released Lease.
      const releasedMs = go1.kill('SIGTERM');
      const afterRelease = await Promise.race(
        [leader, second].map((c) => startedAfter(c, releasedMs, 2 * RETRY_MS + SLACK_MS)),
      );
      assert.equal(afterRelease.reason, 'release');
      assert.equal((await go1.exited).code, 0);
      const winner = [leader, second].find((c) => c.identity === afterRelease.identity)!;
      const loser = [leader, second].find((c) => c !== winner)!;

      // 4. A fresh client-go candidate; the winner hands off to a candidate that does not exist
      //    and dies: only client-go is left. It waits the whole bound, then takes the Lease as
      //    an expired one (+ 1), writing the handoff annotation back unchanged.
      const go2 = await spawn('client-go', leaseName, 'go-2');
      await go2.waitFor(
        (e) => e.event === 'new-leader' && e.leader === winner.identity,
        LEASE_MS,
        'go-2 follows',
      );
      loser.kill('SIGKILL');
      await loser.exited;
      const boundSeconds = leaseDurationSeconds; // the longest a bound may be
      const ghost = await handOff(winner, 'ts-ghost', boundSeconds);
      winner.kill('SIGKILL');
      const goTook = await startedAfter(
        go2,
        ghost.orderedMs,
        // client-go notices the handoff at its next poll and acts at the poll after the bound:
        // each retryPeriod × [1, 2.2).
        boundSeconds * 1000 + 2 * 2.2 * RETRY_MS + 2 * SLACK_MS,
      );
      assert.ok(
        goTook.monotonicMs >= ghost.orderedMs + boundSeconds * 1000,
        `client-go took the reserved Lease ${Math.round(goTook.monotonicMs - ghost.orderedMs)} ms after the order`,
      );
      assert.ok(
        go2.events.some((e) => e.event === 'new-leader' && e.leader === 'ts-ghost'),
        'client-go reported the reserved holder as the new leader',
      );
      console.log(
        `# client-go alone, target gone (bound ${boundSeconds} s): it took the Lease ` +
          `${Math.round(goTook.monotonicMs - ghost.written.monotonicMs)} ms after the handoff`,
      );
      await new Promise((resolve) => setTimeout(resolve, 2 * RETRY_MS));
      const lease = await coordinationApi(cluster).readNamespacedLease({
        name: leaseName,
        namespace: cluster.namespace,
      });
      const ghostTransitions = tokenOf(sampler, 'ts-ghost');
      assert.equal(ghostTransitions.length, 1);
      assert.equal(lease.spec?.holderIdentity, go2.identity);
      assert.equal(lease.spec?.leaseTransitions, ghostTransitions[0]! + 1);
      assert.deepEqual(JSON.parse(lease.metadata!.annotations![HANDOFF_ANNOTATION]!), {
        to: 'ts-ghost',
        leaseTransitions: ghostTransitions[0],
      });

      const intervals = await assertSafe(leaseName, sampler);
      assert.deepEqual(
        intervals.map((i) => i.identity),
        [leader.identity, second.identity, go1.identity, winner.identity, go2.identity],
      );
      // Fencing tokens, in the order the terms ran: a nest-leader term's from its `started`
      // event; a client-go term's (its events carry none) from the Lease read during the term.
      const mine = processes.filter((p) => p.leaseName === leaseName);
      const perTerm = intervals.map((interval) => {
        const started = mine
          .flatMap((p) => p.events)
          .find((e) => e.event === 'started' && e.monotonicMs === interval.startMs);
        if (started?.leaseTransitions !== undefined) return started.leaseTransitions;
        const seen = sampler.samples.filter(
          (s) =>
            s.holderIdentity === interval.identity &&
            s.sentMs >= interval.startMs &&
            s.receivedMs <= interval.endMs,
        );
        assert.ok(seen.length > 0, `no read of the Lease during ${interval.identity}'s term`);
        return Math.max(...seen.map((s) => s.leaseTransitions!));
      });
      assert.equal(perTerm[0], firstTerm);
      for (let i = 1; i < perTerm.length; i++) {
        assert.ok(perTerm[i]! > perTerm[i - 1]!, `fencing tokens per term: ${perTerm}`);
      }
      console.log(`# fencing tokens per term: ${perTerm.join(' < ')}`);
    });
  },
);
