/**
 * Who led when, judged from two independent sides on one CLOCK_MONOTONIC time line: the
 * candidates' own event logs (leadership intervals) and samples of the Lease read by an admin
 * client. Used to assert "never two leaders" across processes and implementations.
 */
import assert from 'node:assert/strict';
import type { CoordinationV1Api } from '@kubernetes/client-node';
import { overlappingSpans } from '@nest-leader/demo/leadership-overlaps';
import type { CandidateImplementation, CandidateProcess } from './candidate-process.js';
import { monotonicNowMs } from './monotonic-time.js';

/** A span in which a candidate believed it led, by its own events. */
export interface LeadershipInterval {
  identity: string;
  implementation: CandidateImplementation;
  /** Its `started` event. */
  startMs: number;
  /** Its `stopping`/`stopped` event, the SIGKILL, its exit, or "now" while it still leads. */
  endMs: number;
  endedBy: 'stopping' | 'stopped' | 'SIGKILL' | 'exit' | 'still-leading';
}

/**
 * Leadership intervals of every candidate in `processes`. A term ends at the candidate's
 * `stopping` (client-go: SIGTERM, before its release) or `stopped` event; a candidate
 * SIGKILLed while leading leads until the kill was sent; one that exited without an event
 * until its exit; one still leading until `nowMs`.
 */
export function leadershipIntervals(
  processes: readonly CandidateProcess[],
  nowMs = monotonicNowMs(),
): LeadershipInterval[] {
  const intervals: LeadershipInterval[] = [];
  for (const process of processes) {
    const open = new Map<string, number>();
    const close = (identity: string, endMs: number, endedBy: LeadershipInterval['endedBy']) => {
      const startMs = open.get(identity);
      if (startMs === undefined) return;
      open.delete(identity);
      intervals.push({
        identity,
        implementation: process.implementation,
        startMs,
        endMs,
        endedBy,
      });
    };
    for (const event of process.events) {
      if (event.event === 'started' && !open.has(event.identity)) {
        open.set(event.identity, event.monotonicMs);
      } else if (event.event === 'stopping' || event.event === 'stopped') {
        close(event.identity, event.monotonicMs, event.event);
      }
    }
    for (const identity of [...open.keys()]) {
      if (process.killed?.signal === 'SIGKILL') {
        close(identity, process.killed.monotonicMs, 'SIGKILL');
      } else if (process.exitStatus) {
        close(identity, process.exitStatus.monotonicMs, 'exit');
      } else {
        close(identity, nowMs, 'still-leading');
      }
    }
  }
  return intervals.sort((a, b) => a.startMs - b.startMs);
}

/** Pairs of intervals of different candidates that overlap in time (must be none). */
export function overlappingIntervals(
  intervals: readonly LeadershipInterval[],
): [LeadershipInterval, LeadershipInterval][] {
  const spanOf = (interval: LeadershipInterval) => ({
    owner: interval.identity,
    startMs: interval.startMs,
    endMs: interval.endMs,
  });
  return overlappingSpans(intervals, spanOf, 'apart');
}

/** One read of the Lease. The server read it at some instant in [sentMs, receivedMs]. */
export interface LeaseSample {
  sentMs: number;
  receivedMs: number;
  exists: boolean;
  holderIdentity?: string;
  leaseTransitions?: number;
  resourceVersion?: string;
}

/**
 * Reads one Lease every `intervalMs` (one read at a time) until stopped. A read that fails
 * (other than 404, which is a sample: no Lease) is counted in {@link readErrors}, never
 * silently dropped: a check on samples proves nothing about the time it has no samples for,
 * so every test that relies on a sampler calls {@link assertSampled}.
 */
export class LeaseSampler {
  /** Every completed read, in order. */
  readonly samples: LeaseSample[] = [];
  /** Reads that failed (not 404): how many, and the last error's message. */
  readErrors = 0;
  lastReadError: string | undefined;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(
    private readonly api: CoordinationV1Api,
    private readonly name: string,
    private readonly namespace: string,
    private readonly intervalMs = 50,
  ) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const sentMs = monotonicNowMs();
      try {
        const lease = await this.api.readNamespacedLease({
          name: this.name,
          namespace: this.namespace,
        });
        this.samples.push({
          sentMs,
          receivedMs: monotonicNowMs(),
          exists: true,
          holderIdentity: lease.spec?.holderIdentity ?? '',
          leaseTransitions: lease.spec?.leaseTransitions ?? 0,
          resourceVersion: lease.metadata?.resourceVersion,
        });
      } catch (error) {
        if ((error as { code?: number }).code === 404) {
          this.samples.push({ sentMs, receivedMs: monotonicNowMs(), exists: false });
        } else {
          this.readErrors += 1;
          this.lastReadError = String((error as Error)?.message ?? error).slice(0, 200);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
    }
  }

  /** Stops sampling and resolves when the last read is done. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /**
   * Asserts the sampler saw enough to judge: at least `minSamples` reads answered (every read
   * error is named in the message). Returns a one-line account for the test's log.
   * @throws AssertionError with fewer samples.
   */
  assertSampled(minSamples: number): string {
    const account =
      `${this.samples.length} samples of Lease ${this.name}, ${this.readErrors} read errors` +
      (this.lastReadError ? ` (last: ${this.lastReadError})` : '');
    assert.ok(this.samples.length >= minSamples, `at least ${minSamples} samples: ${account}`);
    return account;
  }
}

/**
 * Samples that contradict a candidate's belief that it led: read entirely inside its interval
 * (sent after its `started`, answered before its end) but naming another holder (or none).
 * The candidate wrote itself as holder before its `started` event, so such a sample proves
 * someone else wrote the Lease while it still led.
 */
export function samplesContradictingIntervals(
  intervals: readonly LeadershipInterval[],
  samples: readonly LeaseSample[],
): { interval: LeadershipInterval; sample: LeaseSample }[] {
  const found: { interval: LeadershipInterval; sample: LeaseSample }[] = [];
  for (const interval of intervals) {
    for (const sample of samples) {
      if (sample.sentMs < interval.startMs || sample.receivedMs > interval.endMs) continue;
      if (sample.holderIdentity !== interval.identity) found.push({ interval, sample });
    }
  }
  return found;
}

/** leaseTransitions of consecutive samples that went down (must be none). */
export function decreasingTransitions(
  samples: readonly LeaseSample[],
): [LeaseSample, LeaseSample][] {
  const read = samples.filter((s) => s.exists);
  const found: [LeaseSample, LeaseSample][] = [];
  for (let i = 1; i < read.length; i++) {
    if (read[i]!.leaseTransitions! < read[i - 1]!.leaseTransitions!) {
      found.push([read[i - 1]!, read[i]!]);
    }
  }
  return found;
}

/**
 * The earliest instant at which the last write naming `holder` can have happened: the `sentMs`
 * of the sample before the first one showing that final version. After `holder` crashed, a
 * candidate must not start leading before this + leaseDuration (nobody can see a write before
 * it happens). `undefined` if the samples do not show it.
 */
export function lastWriteLowerBoundMs(
  samples: readonly LeaseSample[],
  holder: string,
): number | undefined {
  const read = samples.filter((s) => s.exists);
  const last = read.findLastIndex((s) => s.holderIdentity === holder);
  if (last < 0) return undefined;
  const version = read[last]!.resourceVersion;
  let first = last;
  while (first > 0 && read[first - 1]!.resourceVersion === version) first--;
  return first > 0 ? read[first - 1]!.sentMs : undefined;
}

/**
 * Asserts "never two leaders" on the candidates' intervals and the Lease samples together: no
 * two intervals overlap, no sample read inside an interval names another holder, and
 * leaseTransitions never go down — on enough samples to mean something: at least
 * `minSamples`, by default one a second of the judged time (first `started` to the last
 * interval's end) and at least 10 (the sampler asks every 50 ms). Returns the intervals.
 */
export function assertSingleLeader(
  processes: readonly CandidateProcess[],
  sampler: LeaseSampler,
  minSamples?: number,
): LeadershipInterval[] {
  const intervals = leadershipIntervals(processes);
  const judgedMs =
    intervals.length === 0 ? 0 : Math.max(...intervals.map((i) => i.endMs)) - intervals[0]!.startMs;
  sampler.assertSampled(minSamples ?? Math.max(10, Math.ceil(judgedMs / 1000)));
  const { samples } = sampler;
  assert.deepEqual(overlappingIntervals(intervals), [], 'two candidates led at once');
  assert.deepEqual(
    samplesContradictingIntervals(intervals, samples),
    [],
    'the Lease named someone else while a candidate believed it led',
  );
  assert.deepEqual(decreasingTransitions(samples), [], 'leaseTransitions went down');
  return intervals;
}
