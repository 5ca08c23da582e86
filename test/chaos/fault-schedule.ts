/**
 * The fault schedule: a seeded pseudo-random sequence of fault kinds, so a run can be
 * replayed from its printed seed. Kinds come in shuffled bags (every kind once per bag, plus
 * {@link BAG_EXTRAS}, in a random order), so every kind is exercised as often as every other
 * (the extras more) and any two consecutive bags cover them all.
 */
import { BAG_EXTRAS, FAULT_KINDS, type FaultKind } from './fault-kinds.js';

/** mulberry32: a small, well-known 32-bit PRNG; uniform floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fresh random seed (uint32), for runs not given one. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}

/** Yields fault kinds forever: bag after bag, each a seeded shuffle of `kinds`. */
export class FaultSchedule<K extends string = FaultKind> {
  private readonly random: () => number;
  private bag: K[] = [];

  private readonly bagContents: readonly K[];

  /**
   * @param seed - uint32; the same seed gives the same sequence (and the same target choices)
   * @param kinds - the kinds to draw from; default every kind
   * @param extras - extra copies per bag of some of `kinds`; default {@link BAG_EXTRAS}
   */
  constructor(
    readonly seed: number,
    kinds: readonly K[] = FAULT_KINDS as readonly string[] as readonly K[],
    extras: Partial<Record<K, number>> = BAG_EXTRAS as Partial<Record<K, number>>,
  ) {
    if (kinds.length === 0) throw new Error('the fault schedule needs at least one fault kind');
    this.random = seededRandom(seed);
    this.bagContents = kinds.flatMap((kind) => Array<K>(1 + (extras[kind] ?? 0)).fill(kind));
  }

  /** The next fault kind. */
  next(): K {
    if (this.bag.length === 0) {
      this.bag = [...this.bagContents];
      for (let i = this.bag.length - 1; i > 0; i--) {
        const j = Math.floor(this.random() * (i + 1));
        [this.bag[i], this.bag[j]] = [this.bag[j]!, this.bag[i]!];
      }
    }
    return this.bag.shift()!;
  }

  /** A seeded float in [0, 1), for choices inside a fault (e.g. which follower). */
  uniform(): number {
    return this.random();
  }
}
