/**
 * Requests to Leases as the control plane's audit log recorded them (one JSON line per stage;
 * `RequestReceived` is omitted, so a request yields `ResponseComplete`, and a watch also
 * `ResponseStarted` when it begins). Each request is counted once, by its `auditID`, at its
 * `requestReceivedTimestamp` — so a watch still open at the end of a window counts too.
 */
import { readFileSync } from 'node:fs';

/** One request to a Lease. */
export interface LeaseRequest {
  auditID: string;
  verb: string;
  username: string;
  /** The Lease's name: `objectRef.name`, or the `metadata.name` field selector of a list/watch. */
  leaseName: string | undefined;
  /** HTTP status (0 while a watch is still open). */
  code: number;
  receivedAt: Date;
}

interface RawAuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string };
  objectRef?: { name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
}

/** Every Lease request in the audit log at `path`, once each, in order of arrival. */
export function readLeaseRequests(path: string): LeaseRequest[] {
  const byId = new Map<string, LeaseRequest>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as RawAuditEvent;
    if (event.stage !== 'ResponseComplete' && event.stage !== 'ResponseStarted') continue;
    const previous = byId.get(event.auditID);
    if (previous && event.stage === 'ResponseStarted') continue;
    byId.set(event.auditID, {
      auditID: event.auditID,
      verb: event.verb,
      username: event.user.username,
      leaseName: event.objectRef?.name ?? nameFromFieldSelector(event.requestURI),
      code: event.stage === 'ResponseComplete' ? (event.responseStatus?.code ?? 0) : 0,
      receivedAt: new Date(event.requestReceivedTimestamp),
    });
  }
  return [...byId.values()].sort((a, b) => +a.receivedAt - +b.receivedAt);
}

function nameFromFieldSelector(requestURI: string): string | undefined {
  const selector = new URL(requestURI, 'https://x').searchParams.get('fieldSelector') ?? '';
  return /(?:^|,)metadata\.name=([^,]+)/.exec(selector)?.[1];
}

/** Requests to `leaseName` received in [from, to). */
export function requestsInWindow(
  requests: readonly LeaseRequest[],
  leaseName: string,
  from: Date,
  to: Date,
): LeaseRequest[] {
  return requests.filter(
    (r) => r.leaseName === leaseName && r.receivedAt >= from && r.receivedAt < to,
  );
}

/** Count per verb. */
export function countByVerb(requests: readonly LeaseRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) counts[r.verb] = (counts[r.verb] ?? 0) + 1;
  return counts;
}
