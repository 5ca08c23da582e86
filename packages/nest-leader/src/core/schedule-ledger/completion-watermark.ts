/**
 * The completion watermark of one job within one term: the newest slot such that it and every
 * earlier slot are settled. A leader records it as the ledger's `lastCompleted`, so that a
 * late catch-up run still in progress is never hidden by a newer on-time run that finished
 * first (the next leader would otherwise never run it).
 */
export class CompletionWatermark {
  /** Slots begun and not yet settled, as epoch ms. */
  private readonly running = new Set<number>();
  /** Settled slots newer than the watermark, waiting for an older running one, as epoch ms. */
  private readonly waiting: number[] = [];
  private watermarkMs: number | undefined;

  /**
   * @param watermark - the watermark the term starts from (the ledger's `lastCompleted`
   *   scheduled time), `undefined` when the ledger has none. Every slot up to it, and every
   *   slot a catch-up plan gives up, counts as settled.
   */
  constructor(watermark: Date | undefined) {
    this.watermarkMs = watermark?.getTime();
  }

  /** The current watermark (`undefined` until the first slot settles, if none was given). */
  get watermark(): Date | undefined {
    return this.watermarkMs === undefined ? undefined : new Date(this.watermarkMs);
  }

  /** A slot began to run (an on-time tick or a catch-up run). */
  begin(slot: Date): void {
    this.running.add(slot.getTime());
  }

  /**
   * A slot ran to its end (returned, threw, or its promise settled). Resolves the new
   * watermark when it moved, `undefined` when an older slot is still running.
   */
  settle(slot: Date): Date | undefined {
    const slotMs = slot.getTime();
    this.running.delete(slotMs);
    this.waiting.push(slotMs);
    let oldestRunningMs = Number.POSITIVE_INFINITY;
    for (const ms of this.running) oldestRunningMs = Math.min(oldestRunningMs, ms);
    let moved = false;
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const ms = this.waiting[i]!;
      if (ms >= oldestRunningMs) continue;
      this.waiting.splice(i, 1);
      if (this.watermarkMs === undefined || ms > this.watermarkMs) {
        this.watermarkMs = ms;
        moved = true;
      }
    }
    return moved ? this.watermark : undefined;
  }
}
