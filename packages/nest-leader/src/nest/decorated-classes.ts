/**
 * The class prototypes that declare `@LeaderOnly()` methods or leadership event handlers,
 * recorded by those decorators, so the bootstrap check can name a class Nest never created (it
 * is in no module's `providers`): its scheduled jobs and handlers would otherwise never run,
 * without a word. Prototypes are held as decorator metadata is, for as long as their class
 * exists.
 */
const declared = new Set<object>();
/** Prototypes already reported: one warning per class per process, however many applications. */
const reported = new WeakSet<object>();

export const decoratedClasses = {
  /** A decorator of this package decorated a method of `prototype`. */
  add(prototype: object): void {
    declared.add(prototype);
  },

  /**
   * The declared prototypes that none of `provided` is or inherits from, and that were not
   * returned before; each is returned once per process.
   * @param provided - the prototypes of the instances an application's Nest created
   */
  takeUnprovided(provided: readonly object[]): object[] {
    const unprovided = [...declared].filter(
      (prototype) =>
        !reported.has(prototype) &&
        !provided.some((p) => p === prototype || Object.prototype.isPrototypeOf.call(prototype, p)),
    );
    for (const prototype of unprovided) reported.add(prototype);
    return unprovided;
  },
};
