import type { ShardLeaseStore } from '../../sharding/shard-lease-store.js';

/**
 * What makes `LeaderModule.registerElection()` register a sharded election: N shards spread
 * over the replicas instead of one leader (see the docs' "Sharded leadership").
 */
export interface ShardedElectionModuleOptions {
  /**
   * Number of shards, 1 to 4,096: the election becomes sharded, and its `@LeaderOnly()` methods
   * run once per shard this replica owns. Every replica must use the same number.
   */
  shards?: number;
  /**
   * How long a moved shard's running work may take to drain before this replica acknowledges
   * the move anyway (its signal is aborted at once), in seconds. Default renewDeadlineSeconds.
   */
  drainTimeoutSeconds?: number;
  /**
   * Where the election's Leases live. Default: the Leases of the election's namespace on the
   * API server of its Lease lock (`lock: 'kubernetes'`, or `'auto'` finding a cluster). Tests
   * pass a `MemoryShardLeaseStore` shared by their applications.
   */
  shardStore?: ShardLeaseStore;
}
