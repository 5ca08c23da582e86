import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidLeaderElectionOptionError } from 'nest-leader';
import {
  ELECTION_METRIC_NAMES as M,
  HOLDER_LABEL_LIMITS,
  OTHER_HOLDER_LABEL,
  PrometheusElectionObserver,
} from 'nest-leader/observability';
import { ManualClock } from 'nest-leader/testing';
import { Counter, Registry, register as defaultRegistry } from 'prom-client';
import { samples, term, value } from './metrics.fixture.js';

const billing = { election: 'billing', identity: 'pod-a' };

function setup() {
  const registry = new Registry();
  const clock = new ManualClock();
  const observer = new PrometheusElectionObserver({ registry, clock });
  return { registry, clock, observer };
}

describe('PrometheusElectionObserver', () => {
  it("reports client-go's leader_election_master_status: 0 as follower, 1 while leading, 0 after", async () => {
    const { registry, observer } = setup();
    observer.lockRequest({ ...billing, operation: 'get', outcome: 'success', durationMs: 3 });
    assert.equal(await value(registry, M.masterStatus, { name: 'billing' }), 0);
    observer.termStarted({ ...billing, term: term(1), reason: 'expired' });
    assert.equal(await value(registry, M.masterStatus, { name: 'billing' }), 1);
    observer.termEnded({ ...billing, term: term(1), reason: 'stopped', durationMs: 90_000 });
    assert.equal(await value(registry, M.masterStatus, { name: 'billing' }), 0);
  });

  it("counts client-go's leader_election_slowpath_total per election", async () => {
    const { registry, observer } = setup();
    observer.renewSlowPath(billing);
    observer.renewSlowPath(billing);
    observer.renewSlowPath({ election: 'reports', identity: 'pod-a' });
    assert.equal(await value(registry, M.slowPath, { name: 'billing' }), 2);
    assert.equal(await value(registry, M.slowPath, { name: 'reports' }), 1);
  });

  it('starts the counters of an election at 0 when it is first seen, so increase() sees the first event', async () => {
    const { registry, observer } = setup();
    observer.lockRequest({ ...billing, operation: 'get', outcome: 'success', durationMs: 3 });
    assert.equal(await value(registry, M.transitions, { name: 'billing' }), 0);
    for (const reason of ['handoff', 'preferred', 'release', 'expired', 'created']) {
      assert.equal(await value(registry, M.termsStarted, { name: 'billing', reason }), 0, reason);
    }
    assert.equal(await value(registry, M.slowPath, { name: 'billing' }), 0);
    for (const reason of [
      'stopped',
      'renew-deadline-exceeded',
      'lease-taken-over',
      'election-failed',
    ]) {
      assert.equal(await value(registry, M.termsEnded, { name: 'billing', reason }), 0, reason);
    }
  });

  it('counts terms started and ended by reason, and observes each term length in seconds', async () => {
    const { registry, observer } = setup();
    observer.termStarted({ ...billing, term: term(1), reason: 'created' });
    observer.termEnded({
      ...billing,
      term: term(1),
      reason: 'renew-deadline-exceeded',
      durationMs: 12_500,
    });
    observer.termStarted({ ...billing, term: term(3), reason: 'handoff' });
    observer.termEnded({ ...billing, term: term(3), reason: 'stopped', durationMs: 400_000 });
    const started = (reason: string) =>
      value(registry, M.termsStarted, { name: 'billing', reason });
    assert.equal(await started('created'), 1);
    assert.equal(await started('handoff'), 1);
    assert.equal(await started('release'), 0);
    const ended = (reason: string) => value(registry, M.termsEnded, { name: 'billing', reason });
    assert.equal(await ended('renew-deadline-exceeded'), 1);
    assert.equal(await ended('stopped'), 1);
    assert.equal(await ended('lease-taken-over'), 0);
    const histogram = { name: 'billing' };
    const sum = await value(
      registry,
      M.leadershipDuration,
      histogram,
      `${M.leadershipDuration}_sum`,
    );
    const count = await value(
      registry,
      M.leadershipDuration,
      histogram,
      `${M.leadershipDuration}_count`,
    );
    assert.equal(sum, 412.5);
    assert.equal(count, 2);
    const le = (bound: string) =>
      value(
        registry,
        M.leadershipDuration,
        { name: 'billing', le: bound },
        `${M.leadershipDuration}_bucket`,
      );
    assert.equal(await le('10'), 0);
    assert.equal(await le('30'), 1);
    assert.equal(await le('900'), 2);
  });

  it('times lock requests by operation and outcome, and counts failures (not aborts) by kind', async () => {
    const { registry, observer } = setup();
    observer.lockRequest({ ...billing, operation: 'update', outcome: 'success', durationMs: 20 });
    observer.lockRequest({ ...billing, operation: 'update', outcome: 'conflict', durationMs: 7 });
    observer.lockRequest({ ...billing, operation: 'get', outcome: 'forbidden', durationMs: 4 });
    observer.lockRequest({ ...billing, operation: 'get', outcome: 'timeout', durationMs: 5000 });
    observer.lockRequest({ ...billing, operation: 'get', outcome: 'aborted', durationMs: 1 });
    const count = (operation: string, outcome: string) =>
      value(
        registry,
        M.lockRequestDuration,
        { name: 'billing', operation, outcome },
        `${M.lockRequestDuration}_count`,
      );
    assert.equal(await count('update', 'success'), 1);
    assert.equal(await count('update', 'conflict'), 1);
    assert.equal(await count('get', 'timeout'), 1);
    assert.equal(await count('get', 'aborted'), 1);
    const sum = await value(
      registry,
      M.lockRequestDuration,
      { name: 'billing', operation: 'update', outcome: 'success' },
      `${M.lockRequestDuration}_sum`,
    );
    assert.equal(sum, 0.02);
    const errors = await samples(registry, M.lockErrors);
    assert.deepEqual(
      errors.map((s) => `${s.labels.operation} ${s.labels.kind} ${s.value}`).sort(),
      ['get forbidden 1', 'get timeout 1', 'update conflict 1'],
    );
  });

  it('counts changes of holder, not the first sighting nor a release; missed holders count through leaseTransitions', async () => {
    const { registry, observer } = setup();
    const transitions = () => value(registry, M.transitions, { name: 'billing' });
    const seen = (holderIdentity: string, leaseTransitions: number) =>
      observer.leaderObserved({ ...billing, holderIdentity, leaseTransitions });
    seen('pod-b', 4); // first sighting: learning, not a change
    assert.equal(await transitions(), 0);
    seen('pod-a', 5); // pod-a (this candidate) takes over
    assert.equal(await transitions(), 1);
    seen('', 5); // released
    assert.equal(await transitions(), 1);
    seen('pod-c', 6);
    assert.equal(await transitions(), 2);
    seen('pod-b', 9); // pod-d and pod-a came and went between two reads
    assert.equal(await transitions(), 5);
    seen('pod-c', 0); // a foreign writer that does not count transitions: still one change
    assert.equal(await transitions(), 6);
  });

  it('reports the observed holder as an info gauge with one series per election', async () => {
    const { registry, observer } = setup();
    observer.leaderObserved({ ...billing, holderIdentity: 'pod-b', leaseTransitions: 1 });
    observer.leaderObserved({ ...billing, holderIdentity: 'pod-c', leaseTransitions: 2 });
    const info = await samples(registry, M.observedLeader);
    assert.deepEqual(info, [{ labels: { name: 'billing', holder: 'pod-c' }, value: 1 }]);
    observer.leaderObserved({ ...billing, holderIdentity: '', leaseTransitions: 2 });
    assert.deepEqual(await samples(registry, M.observedLeader), [], 'free Lease: no holder');
  });

  it('a holder a peer wrote that is not a plain name (newline, 300 characters) is shown as (other)', async () => {
    const { registry, observer } = setup();
    const shown = async (holderIdentity: string) => {
      observer.leaderObserved({ ...billing, holderIdentity, leaseTransitions: 1 });
      return (await samples(registry, M.observedLeader))[0]?.labels.holder;
    };
    assert.equal(await shown('pod-b\nleader_election_master_status 1'), OTHER_HOLDER_LABEL);
    assert.equal(await shown('x'.repeat(300)), OTHER_HOLDER_LABEL);
    assert.equal(await shown('..'), OTHER_HOLDER_LABEL);
    assert.equal(await shown('billing-7d9f-x2kq'), 'billing-7d9f-x2kq');
  });

  it('a peer renaming itself on every write adds at most 16 holder values an hour, then (other)', async () => {
    const { registry, clock, observer } = setup();
    const values = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      observer.leaderObserved({ ...billing, holderIdentity: `ghost-${i}`, leaseTransitions: i });
      values.add((await samples(registry, M.observedLeader))[0]!.labels.holder as string);
    }
    assert.equal(values.size, HOLDER_LABEL_LIMITS.maxNewValues + 1);
    assert.ok(values.has(OTHER_HOLDER_LABEL));
    observer.leaderObserved({ ...billing, holderIdentity: 'ghost-3', leaseTransitions: 1001 });
    assert.equal(
      (await samples(registry, M.observedLeader))[0]!.labels.holder,
      'ghost-3',
      'admitted ones stay',
    );
    observer.leaderObserved({ ...billing, holderIdentity: 'pod-a', leaseTransitions: 1002 });
    assert.equal(
      (await samples(registry, M.observedLeader))[0]!.labels.holder,
      'pod-a',
      'itself: always',
    );
    await clock.advance(HOLDER_LABEL_LIMITS.windowMs);
    observer.leaderObserved({ ...billing, holderIdentity: 'billing-new', leaseTransitions: 1003 });
    assert.equal(
      (await samples(registry, M.observedLeader))[0]!.labels.holder,
      'billing-new',
      'an hour later, new names are shown again',
    );
  });

  it('reports seconds since the last successful renew while leading, none otherwise', async () => {
    const { registry, clock, observer } = setup();
    const since = () => value(registry, M.timeSinceLastRenew, { name: 'billing' });
    observer.lockRequest({ ...billing, operation: 'get', outcome: 'success', durationMs: 3 });
    assert.equal(await since(), undefined, 'a follower has no renewals');
    observer.termStarted({ ...billing, term: term(1), reason: 'expired' });
    clock.jump(1_500);
    assert.equal(await since(), 1.5);
    observer.renewed({ ...billing, term: term(1) });
    clock.jump(250);
    assert.equal(await since(), 0.25);
    clock.jump(9_000);
    assert.equal(await since(), 9.25, 'renewals failing: the age grows');
    observer.termEnded({
      ...billing,
      term: term(1),
      reason: 'renew-deadline-exceeded',
      durationMs: 10_750,
    });
    assert.equal(await since(), undefined);
  });

  it('counts @LeaderOnly() calls by handler and outcome through a plain tally', async () => {
    const { registry, observer } = setup();
    const tally = observer.leaderOnlyCallTally('billing', 'InvoiceJobs.close');
    tally.ran += 3;
    tally.skipped += 2;
    assert.equal(
      observer.leaderOnlyCallTally('billing', 'InvoiceJobs.close'),
      tally,
      'one tally per handler',
    );
    const calls = (outcome: string) =>
      value(registry, M.leaderOnlyCalls, {
        name: 'billing',
        handler: 'InvoiceJobs.close',
        outcome,
      });
    assert.equal(await calls('ran'), 3);
    assert.equal(await calls('skipped'), 2);
    assert.equal(await calls('rejected'), 0);
  });

  it('uses only bounded labels, and Prometheus names with units (_seconds, _total, _info)', () => {
    const { registry } = setup();
    const labelsOf = (name: string) =>
      (registry.getSingleMetric(name) as unknown as { labelNames: string[] }).labelNames;
    const expected: Record<string, string[]> = {
      [M.masterStatus]: ['name'],
      [M.slowPath]: ['name'],
      [M.transitions]: ['name'],
      [M.termsStarted]: ['name', 'reason'],
      [M.termsEnded]: ['name', 'reason'],
      [M.leadershipDuration]: ['name'],
      [M.lockRequestDuration]: ['name', 'operation', 'outcome'],
      [M.lockErrors]: ['name', 'operation', 'kind'],
      [M.timeSinceLastRenew]: ['name'],
      [M.observedLeader]: ['name', 'holder'],
      [M.leaderOnlyCalls]: ['name', 'handler', 'outcome'],
      [M.scheduleSlots]: ['name', 'job', 'outcome'],
    };
    assert.deepEqual(Object.keys(expected).sort(), Object.values(M).sort());
    for (const [name, labels] of Object.entries(expected)) {
      assert.deepEqual(labelsOf(name), labels, name);
      assert.match(name, /^leader_election_[a-z_]+(_total|_seconds|_info|_status)$/, name);
    }
  });

  it('counts the slots of leader-only recurring jobs by job and outcome', async () => {
    const { registry, observer } = setup();
    const count = observer.scheduleSlotCounter('billing', 'Invoices.close');
    count('on_time');
    count('caught_up', 3);
    count('redone');
    const text = await registry.metrics();
    assert.match(
      text,
      /leader_election_schedule_slots_total\{name="billing",job="Invoices.close",outcome="caught_up"\} 3/,
    );
    assert.match(
      text,
      /leader_election_schedule_slots_total\{name="billing",job="Invoices.close",outcome="redone"\} 1/,
    );
  });

  describe('registries', () => {
    it('shares one set of metrics between observers of one registry (two apps in one process)', async () => {
      const registry = new Registry();
      const first = new PrometheusElectionObserver({ registry });
      const second = new PrometheusElectionObserver({ registry });
      first.termStarted({
        election: 'billing',
        identity: 'app-1',
        term: term(1),
        reason: 'expired',
      });
      second.lockRequest({
        election: 'billing',
        identity: 'app-2',
        operation: 'get',
        outcome: 'success',
        durationMs: 1,
      });
      second.termStarted({
        election: 'reports',
        identity: 'app-2',
        term: term(1),
        reason: 'expired',
      });
      assert.equal(
        await value(registry, M.masterStatus, { name: 'billing' }),
        1,
        'one of them leads',
      );
      assert.equal(await value(registry, M.masterStatus, { name: 'reports' }), 1);
      first.close();
      assert.equal(await value(registry, M.masterStatus, { name: 'billing' }), 0, 'app-2 follows');
      second.close();
      assert.deepEqual(await samples(registry, M.masterStatus), []);
      assert.equal(
        await value(registry, M.termsStarted, { name: 'billing', reason: 'expired' }),
        1,
        'counters stay',
      );
    });

    it("registers in prom-client's default registry (the one @willsoto/nestjs-prometheus serves) by default", async () => {
      const first = new PrometheusElectionObserver();
      const second = new PrometheusElectionObserver();
      try {
        first.termStarted({
          election: 'default-registry',
          identity: 'a',
          term: term(1),
          reason: 'expired',
        });
        assert.equal(await value(defaultRegistry, M.masterStatus, { name: 'default-registry' }), 1);
        assert.match(
          await defaultRegistry.metrics(),
          /leader_election_master_status\{name="default-registry"\} 1/,
        );
      } finally {
        first.close();
        second.close();
      }
    });

    it('registers again, counters intact, in a registry that was cleared', async () => {
      const registry = new Registry();
      const before = new PrometheusElectionObserver({ registry });
      before.termStarted({ ...billing, term: term(1), reason: 'expired' });
      before.close();
      registry.clear();
      const after = new PrometheusElectionObserver({ registry });
      after.termStarted({ ...billing, term: term(2), reason: 'expired' });
      assert.equal(
        await value(registry, M.termsStarted, { name: 'billing', reason: 'expired' }),
        2,
      );
    });

    it('refuses a registry holding a same-named metric it did not create, naming the option', () => {
      const registry = new Registry();
      new Counter({ name: M.transitions, help: 'someone else', registers: [registry] });
      assert.throws(
        () => new PrometheusElectionObserver({ registry }),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError &&
          error.option === 'registry' &&
          error.message.includes(M.transitions),
      );
    });

    it('refuses something that is not a registry', () => {
      assert.throws(
        () => new PrometheusElectionObserver({ registry: {} as never }),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError && error.option === 'registry',
      );
    });
  });

  it('ignores events after close()', async () => {
    const { registry, observer } = setup();
    observer.termStarted({ ...billing, term: term(1), reason: 'expired' });
    observer.close();
    observer.termStarted({ ...billing, term: term(2), reason: 'expired' });
    observer.renewSlowPath(billing);
    assert.equal(await value(registry, M.termsStarted, { name: 'billing', reason: 'expired' }), 1);
    assert.equal(await value(registry, M.slowPath, { name: 'billing' }), 0);
  });
});
