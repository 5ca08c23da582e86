/**
 * A candidate's advertisement in the election record (`LeaseRecord.candidates`): written once
 * when it starts campaigning, removed when it stops — no request in between, so steady state
 * costs nothing. The leader reads the list with the record it already reads, and prefers
 * whom to hand off to by it (`candidate-preference.ts`). Framework-free.
 *
 * The write is an update of the record over the version read, changing nothing but the list
 * (locks with `storesCandidates` leave the election record exactly as read, so nobody sees a
 * renewal); a conflict — the leader renewed in between — means read and try again.
 */

import { LockConflictError } from '../../errors.js';
import type { AdvertisedCandidate } from '../../locks/advertised-candidates.js';
import type { LeaseRecord, VersionedLeaseRecord } from '../../locks/resource-lock.js';
import type { Clock } from '../clock.js';
import { advertisementMessages } from './candidate-advertisement.messages.js';
import { advertises, withCandidate, withoutCandidate } from './candidate-preference.js';
import type { ElectionLogger } from '../leader-elector.options.js';

/**
 * How many failed attempts (errors other than a conflict) an advertisement or its removal
 * makes before giving up. Conflicts do not count: each is another candidate's write landing
 * (a rollout has every old pod withdrawing and every new pod advertising at once, beside the
 * leader's renewals), so the edit re-reads and tries again at once for as long as its signal
 * lasts — a removal given up after a few conflicts would leave a stopped candidate advertised,
 * and a stopping leader could hand to it.
 */
export const MAX_ADVERTISEMENT_ATTEMPTS = 5;

/** What a {@link CandidateAdvertisement} needs of the elector. */
export interface AdvertisementLock {
  /** The lock's description, for log lines. */
  lock: string;
  get(signal: AbortSignal): Promise<VersionedLeaseRecord | undefined>;
  update(record: LeaseRecord, version: string, signal: AbortSignal): Promise<string>;
  /**
   * Told of every record written (the elector's observed record). Not of records read: a read
   * racing the elector's own may be older than what it has already seen.
   */
  observe(current: VersionedLeaseRecord): void;
}

/** One candidate's advertisement: {@link advertise} on start, {@link withdraw} on stop. */
export class CandidateAdvertisement {
  /**
   * @param entry - what this candidate advertises
   * @param retryPeriodMs - the wait between attempts, and while the record does not exist yet
   */
  constructor(
    readonly entry: AdvertisedCandidate,
    private readonly lock: AdvertisementLock,
    private readonly clock: Clock,
    private readonly retryPeriodMs: number,
    private readonly logger: ElectionLogger,
  ) {}

  /**
   * Adds (or replaces) this candidate's entry in the record, reading first; waits while the
   * record does not exist (the first leader creates it with its own entry). Resolves when
   * written, already there, `signal` aborted, or after {@link MAX_ADVERTISEMENT_ATTEMPTS}
   * failures other than conflicts (logged once; the election goes on without this
   * advertisement). Never rejects.
   */
  async advertise(signal: AbortSignal): Promise<void> {
    await this.edit(
      signal,
      (candidates) =>
        advertises(candidates, this.entry) ? undefined : withCandidate(candidates, this.entry),
      true,
      (error) =>
        this.logger.warn(
          advertisementMessages.advertiseFailed(this.entry.identity, this.lock.lock, error),
        ),
    );
  }

  /**
   * Removes this candidate's entry from the record, if there. Resolves when done, `signal`
   * aborted, or after {@link MAX_ADVERTISEMENT_ATTEMPTS} failures other than conflicts
   * (logged). Never rejects.
   */
  async withdraw(signal: AbortSignal): Promise<void> {
    await this.edit(
      signal,
      (candidates) =>
        candidates?.some((c) => c.identity === this.entry.identity)
          ? (withoutCandidate(candidates, this.entry.identity) ?? [])
          : undefined,
      false,
      (error) =>
        this.logger.warn(
          advertisementMessages.withdrawFailed(this.entry.identity, this.lock.lock, error),
        ),
    );
  }

  /**
   * Reads the record and writes it with `change(candidates)` (`undefined`: nothing to write),
   * retrying after conflicts at once (not counted) and after other failures each retryPeriod.
   * @param waitForRecord - while the record does not exist, wait and read again (else: done)
   */
  private async edit(
    signal: AbortSignal,
    change: (candidates: AdvertisedCandidate[] | undefined) => AdvertisedCandidate[] | undefined,
    waitForRecord: boolean,
    gaveUp: (error: unknown) => void,
  ): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        const current = await this.lock.get(signal);
        if (!current) {
          if (!waitForRecord) return;
          await this.clock.sleep(this.retryPeriodMs, signal);
          continue;
        }
        const candidates = change(current.record.candidates);
        if (candidates === undefined) return;
        const record: LeaseRecord = { ...current.record, candidates };
        if (candidates.length === 0) delete record.candidates;
        const version = await this.lock.update(record, current.version, signal);
        this.lock.observe({ record, version });
        if (waitForRecord) {
          const { identity, podTemplateHash, priority } = this.entry;
          this.logger.info(
            advertisementMessages.advertised(identity, this.lock.lock, podTemplateHash, priority),
          );
        }
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof LockConflictError) continue;
        if (++failures >= MAX_ADVERTISEMENT_ATTEMPTS) return gaveUp(error);
        await this.clock.sleep(this.retryPeriodMs, signal);
      }
    }
  }
}
