/**
 * One clock for events of several processes on one host: CLOCK_MONOTONIC, which Node's
 * `process.hrtime` reads (libuv) and the client-go candidate reads with `clock_gettime`.
 * `performance.now()` is the same clock shifted by each process's own start, so it does not
 * compare across processes.
 */

/** CLOCK_MONOTONIC now, in ms (sub-µs resolution). */
export function monotonicNowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
