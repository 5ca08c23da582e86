import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { PrometheusShardObserver, SHARD_METRIC_NAMES } from 'nest-leader/observability';
import { ShardWorld } from './sharded.fixture.js';

/** The sum of the samples of `name` (a histogram's `<name>_count` too) with `labels`. */
async function value(registry: Registry, name: string, labels: Record<string, string> = {}) {
  const base = name.replace(/_count$/, '');
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === base);
  const values = (metric?.values ?? []) as {
    value: number;
    labels: Record<string, unknown>;
    metricName?: string;
  }[];
  return values
    .filter((v) => (v.metricName ?? base) === name)
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((sum, v) => sum + v.value, 0);
}

describe('PrometheusShardObserver', () => {
  test("exports owned shards, terms started and ended by reason, and the coordinator's handoff and unowned times", async () => {
    const world = new ShardWorld(16);
    const registries = new Map<string, Registry>();
    const join = (id: string) => {
      const registry = new Registry();
      registries.set(id, registry);
      world.add(id, { observer: new PrometheusShardObserver({ registry }) });
    };
    join('a');
    join('b');
    await world.run(3000);
    join('c');
    await world.run(3000);

    const owned = async (id: string) =>
      value(registries.get(id)!, SHARD_METRIC_NAMES.owned, { name: 'orders' });
    const counts = [await owned('a'), await owned('b'), await owned('c')];
    assert.deepEqual(
      counts.sort((x, y) => x - y),
      [5, 5, 6],
    );
    const revoked =
      (await value(registries.get('a')!, SHARD_METRIC_NAMES.termsEnded, { reason: 'revoked' })) +
      (await value(registries.get('b')!, SHARD_METRIC_NAMES.termsEnded, { reason: 'revoked' }));
    assert.equal(revoked, await value(registries.get('c')!, SHARD_METRIC_NAMES.termsStarted));
    const coordinator = [...world.members.values()].find((m) => m.election.isCoordinator())!;
    const handoffs = await value(
      registries.get(coordinator.id)!,
      `${SHARD_METRIC_NAMES.handoff}_count`,
    );
    assert.equal(handoffs, revoked, 'every moved shard: one handoff observed by the coordinator');
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });
});
