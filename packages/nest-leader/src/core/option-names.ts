/**
 * Rejects option keys nobody reads, naming the closest known option: `leaseDuration: 60`
 * would otherwise run silently with the 15 s default. Framework-free; the Nest layer checks
 * its own options with it too.
 */

import { InvalidLeaderElectionOptionError } from '../errors.js';
import { electionMessages } from './election.messages.js';

/**
 * Throws if `options` has an own key not in `known`.
 * @param owner - what takes the options, for the message (e.g. `LeaderElector`)
 * @throws InvalidLeaderElectionOptionError naming the unknown key and the closest known name.
 */
export function rejectUnknownOptions(
  options: object,
  known: readonly string[],
  owner: string,
): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    throw new InvalidLeaderElectionOptionError(
      key,
      electionMessages.unknownOption(owner, closestName(key, known)),
      (options as Record<string, unknown>)[key],
    );
  }
}

/**
 * The known name `key` most likely meant: one that starts with it or it starts with
 * (`leaseDuration` → `leaseDurationSeconds`), else the nearest by edit distance if within a
 * third of its length, else the one sharing the longest start, if that is at least 60% of
 * `key` (`releaseOnStop` → `releaseOnShutdown`); `undefined` when nothing is close.
 */
export function closestName(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const prefixed = known.find((name) => {
    const candidate = name.toLowerCase();
    return lower.length >= 4 && (candidate.startsWith(lower) || lower.startsWith(candidate));
  });
  if (prefixed) return prefixed;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(lower, name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (best && best.distance <= Math.max(2, Math.floor(key.length / 3))) return best.name;
  let longest: { name: string; length: number } | undefined;
  for (const name of known) {
    const length = commonPrefixLength(lower, name.toLowerCase());
    if (!longest || length > longest.length) longest = { name, length };
  }
  return longest && longest.length >= Math.max(4, Math.ceil(key.length * 0.6))
    ? longest.name
    : undefined;
}

function commonPrefixLength(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}
