/**
 * Kubernetes Events on a sharded election's assignment Lease when shards move (reason
 * `ShardsMoved`): at most one per interval per election, the grants in between coalesced into
 * it, so `kubectl describe lease <name>-shards` shows who took which shards when. Written by
 * the coordinator (the member that grants). Framework-free.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { type Clock, SystemClock, type TimerHandle } from '../core/clock.js';
import type { ElectionLogger } from '../core/leader-elector.options.js';
import { assignmentLeaseName } from '../sharding/member-state.js';
import type { ShardObserver } from '../sharding/shard-observer.js';
import { LeaseEventWriter } from './lease-event.writer.js';
import { observabilityMessages } from './observability.messages.js';

/** `reason` of the Events. */
export const SHARDS_MOVED_EVENT_REASON = 'ShardsMoved';
/** `action` of the Events. */
export const SHARDS_MOVED_EVENT_ACTION = 'GrantShards';
/** Default least time between two ShardsMoved Events of one election, in ms. */
export const DEFAULT_SHARDS_MOVED_INTERVAL_MS = 10_000;
/** Longest `note`, in bytes of UTF-8 (the API server refuses longer ones). */
export const MAX_EVENT_NOTE_BYTES = 1024;

/** Options of {@link ShardEventsObserver}. */
export interface ShardEventsObserverOptions {
  /** Credentials and cluster: the same kubeconfig the election's Leases use. */
  kubeConfig: KubeConfig;
  /** The election's namespace; the Events are created there. */
  namespace: string;
  /**
   * The sharded election's name as its Leases use it (the coordinator Lease's name); the Events
   * go on its assignment Lease, `<election>-shards`.
   */
  election: string;
  /** This member's identity: the Events' `reportingInstance`. */
  identity: string;
  /** `reportingController` of the Events (a qualified name); default `nest-leader`. */
  reportingController?: string;
  /** Least time between two Events, in ms; default 10,000. */
  minIntervalMs?: number;
  /** Where failures are logged (one warning per kind of failure); default the console. */
  logger?: Pick<ElectionLogger, 'warn' | 'debug'>;
  /** Timeout of each request in ms; default 5000. */
  requestTimeoutMs?: number;
  /** Time source for the interval (tests inject `ManualClock`); default the system's. */
  clock?: Clock;
}

interface PendingGrant {
  shard: number;
  owner: string;
  from: string | undefined;
  token: number;
}

/**
 * A {@link ShardObserver} that records an Event (type `Normal`, reason `ShardsMoved`, action
 * `GrantShards`) on the assignment Lease for the shards the coordinator grants: the first grant
 * after a quiet interval at once, later ones coalesced into one Event when `minIntervalMs` has
 * passed since the previous Event. The note lists the new owners and their shards (and whom
 * they came from), cut to 1 KB. Never blocks or fails the election: the writes are queued (see
 * `LeaseEventWriter`); a failure is logged once per kind. Needs RBAC `create` on `events` in API
 * group `events.k8s.io` in the election's namespace.
 *
 * @throws InvalidLeaderElectionOptionError (constructor) for an invalid `namespace`, election
 *   name, `reportingController` or `requestTimeoutMs`.
 */
export class ShardEventsObserver implements ShardObserver {
  private readonly writer: LeaseEventWriter;
  private readonly identity: string;
  private readonly minIntervalMs: number;
  private readonly clock: Clock;
  private pending: PendingGrant[] = [];
  private timer: TimerHandle | undefined;
  private lastWrittenMs: number | undefined;

  constructor(options: ShardEventsObserverOptions) {
    this.writer = new LeaseEventWriter({
      kubeConfig: options.kubeConfig,
      namespace: options.namespace,
      leaseName: assignmentLeaseName(options.election),
      reportingController: options.reportingController,
      logger: options.logger,
      requestTimeoutMs: options.requestTimeoutMs,
    });
    this.identity = options.identity;
    this.minIntervalMs = options.minIntervalMs ?? DEFAULT_SHARDS_MOVED_INTERVAL_MS;
    this.clock = options.clock ?? new SystemClock();
  }

  /** Queues the grant; the Event follows at once or when the interval has passed. */
  shardGranted(event: {
    shard: number;
    owner: string;
    from: string | undefined;
    token: number;
  }): void {
    this.pending.push({
      shard: event.shard,
      owner: event.owner,
      from: event.from,
      token: event.token,
    });
    if (this.timer) return;
    const nowMs = this.clock.nowMs();
    const dueMs =
      this.lastWrittenMs === undefined ? nowMs : this.lastWrittenMs + this.minIntervalMs;
    // Even "now" waits for the current turn to end: one assignment write grants its shards in
    // one loop, and they make one Event.
    this.timer = this.clock.setTimer(Math.max(0, dueMs - nowMs), () => this.writePending());
  }

  /**
   * Writes what is pending now (ignoring the interval: the election is stopping) and resolves
   * when every Event queued so far was written or given up. Never rejects.
   */
  flush(): Promise<void> {
    this.writePending();
    return this.writer.flush();
  }

  private writePending(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const grants = this.pending;
    this.pending = [];
    this.lastWrittenMs = this.clock.nowMs();
    this.writer.write({
      identity: this.identity,
      type: 'Normal',
      reason: SHARDS_MOVED_EVENT_REASON,
      action: SHARDS_MOVED_EVENT_ACTION,
      note: shardsMovedNote(grants),
    });
  }
}

/** The note of one Event: the grants per new owner, at most {@link MAX_EVENT_NOTE_BYTES}. */
export function shardsMovedNote(grants: readonly PendingGrant[]): string {
  // The last grant of a shard wins (a shard granted twice in one interval is listed once).
  const latest = new Map<number, PendingGrant>();
  for (const grant of grants) latest.set(grant.shard, grant);
  const byOwner = new Map<string, { shards: number[]; from: Set<string> }>();
  for (const grant of [...latest.values()].sort((a, b) => a.shard - b.shard)) {
    let entry = byOwner.get(grant.owner);
    if (!entry) byOwner.set(grant.owner, (entry = { shards: [], from: new Set() }));
    entry.shards.push(grant.shard);
    if (grant.from !== undefined && grant.from !== grant.owner) entry.from.add(grant.from);
  }
  const tokens = grants.map((g) => g.token);
  const note = observabilityMessages.shardsMovedNote(
    latest.size,
    { from: Math.min(...tokens), to: Math.max(...tokens) },
    [...byOwner].map(([owner, { shards, from }]) => ({ owner, shards, from: [...from] })),
  );
  return truncateUtf8(note, MAX_EVENT_NOTE_BYTES);
}

/** `text` cut to at most `maxBytes` bytes of UTF-8, ending in "…" when cut. */
function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const ellipsis = '…';
  let cut = '';
  let bytes = Buffer.byteLength(ellipsis);
  for (const char of text) {
    const size = Buffer.byteLength(char);
    if (bytes + size > maxBytes) break;
    cut += char;
    bytes += size;
  }
  return cut + ellipsis;
}
