/**
 * What candidates advertise about themselves beside the election record
 * (`LeaseRecord.candidates`; on a Lease, the annotation `nest-leader/candidates`), so a leader
 * handing off can prefer one (the order: `preferredCandidate`) without a request of its own:
 * it already holds the record. The shape, its stored JSON form and its lenient parser.
 */

import {
  clampPriority,
  clampStartedAt,
  isCandidateIdentity,
  isPodTemplateHash,
  MAX_ADVERTISED_CANDIDATES,
  MAX_CANDIDATES_TEXT_LENGTH,
} from './peer-bounds.js';
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
  /**
   * When the candidate's Pod was created (its `metadata.creationTimestamp`): unlike
   * `startedAt`, a container restart does not renew it, so it dates the pod's template
   * (`newestTemplate`). `undefined` when unknown (not read, or not a pod).
   */
  podCreationTimestamp?: Date;
}

/**
 * The candidates from a stored value: an array, or its JSON text (a Lease annotation), bounded
 * as hostile input (see `peer-bounds.ts`): a text longer than `MAX_CANDIDATES_TEXT_LENGTH` is
 * ignored; entries with an invalid identity, priority or time are skipped, a hash that is not a
 * label value is dropped, priorities and times are clamped; a repeated identity keeps its last
 * entry; of more than `MAX_ADVERTISED_CANDIDATES`, the latest-started are kept (in stored
 * order). `undefined` when absent, too long or not an array. Never throws: foreign writers may
 * store anything.
 */
export function parseAdvertisedCandidates(value: unknown): AdvertisedCandidate[] | undefined {
  if (typeof value === 'string' && value.length > MAX_CANDIDATES_TEXT_LENGTH) return undefined;
  const entries = parseStoredJson(value);
  if (!Array.isArray(entries)) return undefined;
  const byIdentity = new Map<string, AdvertisedCandidate>();
  // A stored array (not text) has no length cap of its own: read its last entries only.
  for (const entry of entries.slice(-4 * MAX_ADVERTISED_CANDIDATES)) {
    const candidate = parseEntry(entry);
    if (candidate) {
      byIdentity.delete(candidate.identity);
      byIdentity.set(candidate.identity, candidate);
    }
  }
  const candidates = [...byIdentity.values()];
  if (candidates.length <= MAX_ADVERTISED_CANDIDATES) return candidates;
  const kept = new Set(
    [...candidates]
      .sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime())
      .slice(0, MAX_ADVERTISED_CANDIDATES),
  );
  return candidates.filter((c) => kept.has(c));
}

function parseEntry(entry: unknown): AdvertisedCandidate | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { identity, podTemplateHash, startedAt, podCreationTimestamp } = entry as Record<
    string,
    unknown
  >;
  const priority = clampPriority((entry as Record<string, unknown>).priority);
  if (!isCandidateIdentity(identity) || priority === undefined) return undefined;
  const started = parseTime(startedAt);
  if (!started) return undefined;
  const candidate: AdvertisedCandidate = { identity, priority, startedAt: started };
  if (isPodTemplateHash(podTemplateHash)) candidate.podTemplateHash = podTemplateHash;
  const created = parseTime(podCreationTimestamp);
  // A pod is created before its container starts: a later time is not believed.
  if (created && created.getTime() <= candidate.startedAt.getTime()) {
    candidate.podCreationTimestamp = created;
  }
  return candidate;
}

/** A stored time (ISO 8601 text or a `Date`), clamped; `undefined` when not one. */
function parseTime(value: unknown): Date | undefined {
  if (typeof value !== 'string' && !(value instanceof Date)) return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : clampStartedAt(time);
}

/** The JSON text stored for `candidates` (times as ISO 8601). */
export function formatAdvertisedCandidates(candidates: readonly AdvertisedCandidate[]): string {
  return JSON.stringify(candidates);
}

/** A deep copy (no shared `Date`s). */
export function copyAdvertisedCandidates(
  candidates: readonly AdvertisedCandidate[],
): AdvertisedCandidate[] {
  return candidates.map((c) => {
    const copy = { ...c, startedAt: new Date(c.startedAt.getTime()) };
    if (c.podCreationTimestamp) copy.podCreationTimestamp = new Date(c.podCreationTimestamp);
    return copy;
  });
}
