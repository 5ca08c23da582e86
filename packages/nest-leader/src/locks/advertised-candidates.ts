/**
 * What candidates advertise about themselves beside the election record
 * (`LeaseRecord.candidates`; on a Lease, the annotation `nest-leader/candidates`), so a leader
 * handing off can prefer one — a candidate of the newest pod template — without a request of
 * its own: it already holds the record. The shape, its stored JSON form and its lenient parser.
 */

import { parseStoredJson } from './stored-json.js';

/** One candidate's advertisement (see `LeaseRecord.candidates`). */
export interface AdvertisedCandidate {
  /** The candidate's identity (its `holderIdentity` when it leads). */
  identity: string;
  /**
   * The `pod-template-hash` label of the candidate's pod: which version of the Deployment it
   * runs. `undefined` when it does not know (not in a Deployment, or the env is not set).
   */
  podTemplateHash?: string;
  /** The user-set priority; higher is preferred. */
  priority: number;
  /** When the candidate started (wall clock, its elector's creation). */
  startedAt: Date;
}

/**
 * The candidates from a stored value: an array, or its JSON text (a Lease annotation).
 * Malformed entries are skipped, a repeated identity keeps its last entry; `undefined` when
 * absent or not an array. Never throws: foreign writers may store anything.
 */
export function parseAdvertisedCandidates(value: unknown): AdvertisedCandidate[] | undefined {
  const entries = parseStoredJson(value);
  if (!Array.isArray(entries)) return undefined;
  const byIdentity = new Map<string, AdvertisedCandidate>();
  for (const entry of entries) {
    const candidate = parseEntry(entry);
    if (candidate) {
      byIdentity.delete(candidate.identity);
      byIdentity.set(candidate.identity, candidate);
    }
  }
  return [...byIdentity.values()];
}

function parseEntry(entry: unknown): AdvertisedCandidate | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { identity, podTemplateHash, priority, startedAt } = entry as Record<string, unknown>;
  if (typeof identity !== 'string' || identity === '') return undefined;
  if (typeof priority !== 'number' || !Number.isFinite(priority)) return undefined;
  if (typeof startedAt !== 'string' && !(startedAt instanceof Date)) return undefined;
  const started = new Date(startedAt);
  if (Number.isNaN(started.getTime())) return undefined;
  const candidate: AdvertisedCandidate = { identity, priority, startedAt: started };
  if (typeof podTemplateHash === 'string' && podTemplateHash !== '') {
    candidate.podTemplateHash = podTemplateHash;
  }
  return candidate;
}

/** The JSON text stored for `candidates` (times as ISO 8601). */
export function formatAdvertisedCandidates(candidates: readonly AdvertisedCandidate[]): string {
  return JSON.stringify(candidates);
}

/** A deep copy (no shared `Date`s). */
export function copyAdvertisedCandidates(
  candidates: readonly AdvertisedCandidate[],
): AdvertisedCandidate[] {
  return candidates.map((c) => ({ ...c, startedAt: new Date(c.startedAt.getTime()) }));
}
