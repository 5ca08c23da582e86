import type { ElectionObserver, LeaderTerm, ResourceLock } from 'nest-leader';
import {
  LeaderElector,
  type LeaderElectorOptions,
  type LeaseRecord,
  type LockOperation,
  type VersionedLeaseRecord,
} from 'nest-leader/core';
import { isOpenOfferTo } from '../../../dist/esm/core/handoff/handoff-offer.js';
import { ManualClock, MemoryLock, RecordingLogger } from 'nest-leader/testing';

/** What the callbacks of one elector saw, in order. */
export interface CallbackLog {
  events: string[];
  terms: LeaderTerm[];
  newLeaders: string[];
}

/** Default test timings: leaseDuration 15 s, renewDeadline 10 s, retryPeriod 2 s, no jitter. */
export function candidate(
  identity: string,
  shared: { lock: MemoryLock; clock: ManualClock; logger?: RecordingLogger },
  overrides: Partial<LeaderElectorOptions> = {},
): { elector: LeaderElector; log: CallbackLog; logger: RecordingLogger } {
  const logger = shared.logger ?? new RecordingLogger();
  const log: CallbackLog = { events: [], terms: [], newLeaders: [] };
  const elector = new LeaderElector({
    lock: shared.lock,
    identity,
    clock: shared.clock,
    logger,
    random: () => 0,
    callbacks: {
      onStartedLeading: (term) => {
        log.events.push(`started ${term.leaseTransitions}`);
        log.terms.push(term);
      },
      onStoppedLeading: (term) => {
        log.events.push(`stopped ${term.leaseTransitions}`);
      },
      onNewLeader: (id) => log.newLeaders.push(id),
    },
    ...overrides,
  });
  return { elector, log, logger };
}

/** A fresh clock and lock. */
export function world(): { lock: MemoryLock; clock: ManualClock } {
  return { lock: new MemoryLock({ name: 'test' }), clock: new ManualClock() };
}

/** Seconds to milliseconds, for readable `advance` calls. */
export const s = (seconds: number): number => seconds * 1000;

/**
 * `a` starts first and leads; `b` starts and has seen the Lease held by `a` (1 s later).
 * `aOverrides` customise `a` (e.g. its callbacks).
 */
export async function leaderAndFollower(
  w: { lock: MemoryLock; clock: ManualClock },
  aOverrides: Partial<LeaderElectorOptions> = {},
): Promise<{ a: ReturnType<typeof candidate>; b: ReturnType<typeof candidate> }> {
  const a = candidate('a', w, aOverrides);
  const b = candidate('b', w);
  a.elector.start();
  await w.clock.advance(0);
  b.elector.start();
  await w.clock.advance(s(1));
  return { a, b };
}

/**
 * A lock that answers every request `latencyMs` after it was sent (then does it on `inner`),
 * on the manual clock: an API server far away. Records when each request was sent.
 */
export class SlowLock implements ResourceLock {
  readonly description: string;
  readonly sent: { operation: LockOperation; atMs: number }[] = [];
  /** As the MemoryLock it forwards to. */
  readonly storesCandidates = true;

  constructor(
    private readonly inner: MemoryLock,
    private readonly clock: ManualClock,
    public latencyMs: number,
  ) {
    this.description = inner.description;
  }

  get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    return this.after('get', signal, () => this.inner.get(signal));
  }

  create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    return this.after('create', signal, () => this.inner.create(record, signal));
  }

  update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    return this.after('update', signal, () => this.inner.update(record, version, signal));
  }

  private async after<T>(
    operation: LockOperation,
    signal: AbortSignal | undefined,
    request: () => Promise<T>,
  ): Promise<T> {
    this.sent.push({ operation, atMs: this.clock.nowMs() });
    await this.clock.sleep(this.latencyMs, signal);
    signal?.throwIfAborted();
    return request();
  }
}

/** An ElectionObserver that records every call as `method` + the event. */
export class RecordingObserver implements ElectionObserver {
  readonly calls: { method: keyof ElectionObserver; event: Record<string, unknown> }[] = [];
  termStarted(event: Parameters<NonNullable<ElectionObserver['termStarted']>>[0]): void {
    this.record('termStarted', event);
  }
  termEnded(event: Parameters<NonNullable<ElectionObserver['termEnded']>>[0]): void {
    this.record('termEnded', event);
  }
  renewed(event: Parameters<NonNullable<ElectionObserver['renewed']>>[0]): void {
    this.record('renewed', event);
  }
  renewSlowPath(event: Parameters<NonNullable<ElectionObserver['renewSlowPath']>>[0]): void {
    this.record('renewSlowPath', event);
  }
  lockRequest(event: Parameters<NonNullable<ElectionObserver['lockRequest']>>[0]): void {
    this.record('lockRequest', event);
  }
  leaderObserved(event: Parameters<NonNullable<ElectionObserver['leaderObserved']>>[0]): void {
    this.record('leaderObserved', event);
  }
  private record(method: keyof ElectionObserver, event: object): void {
    this.calls.push({ method, event: { ...event } as Record<string, unknown> });
  }
  of(method: keyof ElectionObserver): Record<string, unknown>[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.event);
  }
}

/**
 * Advances the clock in 100 ms steps until `pending` settles (at most `limitMs`), and returns
 * it: for transfers and stops that wait, leading on, for a candidate to accept an offer.
 */
export async function settle<T>(
  w: { clock: ManualClock },
  pending: Promise<T>,
  limitMs = s(60),
): Promise<T> {
  let settled = false;
  pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  await w.clock.advance(0);
  for (let waitedMs = 0; !settled && waitedMs < limitMs; waitedMs += 100) {
    await w.clock.advance(100);
  }
  return pending;
}

/**
 * A stand-in for candidate `identity` that is not an elector: every 100 ms on the clock it
 * reads the lock and accepts an open handoff offer to itself (one versioned write, as a real
 * candidate does), then never takes the Lease — a target that accepts and dies at once.
 * `onAccepted` runs right after the acceptance is written. Stops with the returned function.
 */
export function acceptsThenDies(
  w: { lock: MemoryLock; clock: ManualClock },
  identity: string,
  onAccepted: () => void = () => undefined,
): () => void {
  const stopped = new AbortController();
  void (async () => {
    while (!stopped.signal.aborted) {
      await w.clock.sleep(100, stopped.signal).catch(() => undefined);
      const current = w.lock.read();
      const offered = current?.record.handoffOffer?.toStartedAt; // whichever incarnation
      if (!current || !isOpenOfferTo(current.record, identity, offered)) continue;
      const offer = { ...current.record.handoffOffer!, accepted: true as const };
      try {
        await w.lock.update({ ...current.record, handoffOffer: offer }, current.version);
      } catch {
        continue; // the leader renewed in between: read again
      }
      onAccepted();
      return;
    }
  })();
  return () => stopped.abort();
}

/** `old-1` (template `aaa`) leads and `old-2` (`aaa`) follows, alive: no newer template yet. */
export async function oldTemplateOnly(w: { lock: MemoryLock; clock: ManualClock }) {
  const leader = candidate('old-1', w, { podTemplateHash: 'aaa' });
  leader.elector.start();
  await w.clock.advance(s(1));
  const oldPeer = candidate('old-2', w, { podTemplateHash: 'aaa' });
  oldPeer.elector.start();
  await w.clock.advance(s(1));
  return { leader, oldPeer };
}
