/**
 * A candidate program's memory on request: on SIGUSR2 it collects garbage (a full GC, so the
 * figure is what the process holds, not when V8 last happened to collect) and prints one
 * `memory` event with `process.memoryUsage()`'s `rss` and `heapUsed`, bytes. Read from outside
 * with `CandidateProcess.memory()`. Used by `pnpm bench shards` to compare a member of a sharded
 * election with a one-election candidate of the same age.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Node's `gc()`, enabled at run time (as `--expose-gc` would at start). */
function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Answers SIGUSR2 with a `memory` event through `emit` (see the file's comment).
 * @param emit - the program's event printer
 */
export function reportMemoryOnSignal(
  emit: (event: { event: 'memory'; rssBytes: number; heapUsedBytes: number }) => void,
): void {
  const gc = fullGc();
  process.on('SIGUSR2', () => {
    gc();
    const { rss, heapUsed } = process.memoryUsage();
    emit({ event: 'memory', rssBytes: rss, heapUsedBytes: heapUsed });
  });
}
