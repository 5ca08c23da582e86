/**
 * The texts of the observers: metrics, Kubernetes Events and pod role labels.
 */

import type { LeaderTermEndReason } from '../errors.interfaces.js';
import { quoted } from '../format.js';
import { termEndReasonText } from '../errors.messages.js';
import type { LeadershipChangeReason } from '../core/election-observer.js';

/** What each {@link LeadershipChangeReason} means, for the BecameLeader Event. */
const leadershipChangeReasonText: Record<LeadershipChangeReason, string> = {
  handoff: 'the previous leader handed the Lease to it',
  preferred: 'the previous leader handed the Lease to it as the preferred candidate',
  release: 'the previous leader released the Lease',
  expired: "the previous holder's Lease expired",
  created: 'it created the Lease',
};

/** Kubernetes resource of Events (API group events.k8s.io), as RBAC names it. */
export const EVENT_RESOURCE = 'events.events.k8s.io';

export const observabilityMessages = {
  foreignMetric: (name: string) =>
    `the registry already has a metric "${name}" that nest-leader did not create; use another ` +
    'registry, or remove that metric',
  registryRule: 'must be a prom-client Registry (registerMetric, getSingleMetric)',
  /**
   * `note` of the Event recorded when a candidate starts a term: client-go's wording, then why
   * (the {@link LeadershipChangeReason}).
   */
  becameLeaderNote: (identity: string, reason: LeadershipChangeReason) =>
    `${identity} became leader: ${reason} (${leadershipChangeReasonText[reason]})`,
  /** `note` of the Event recorded when a term ends. */
  stoppedLeadingNote: (identity: string, reason: LeaderTermEndReason) =>
    `${identity} stopped leading: ${reason} (${termEndReasonText[reason]})`,
  /**
   * `note` of a ShardsMoved Event: the grants since the last one, per new owner, e.g.
   * "5 shards granted at revisions 7-8: demo-b ← 3, 4 (from demo-a); demo-c ← 0, 1, 2".
   */
  shardsMovedNote: (
    granted: number,
    revisions: { from: number; to: number },
    owners: readonly { owner: string; shards: readonly number[]; from: readonly string[] }[],
  ) =>
    `${granted} ${granted === 1 ? 'shard' : 'shards'} granted at revision` +
    (revisions.from === revisions.to
      ? ` ${revisions.from}`
      : `s ${revisions.from}-${revisions.to}`) +
    ': ' +
    owners
      .map(
        ({ owner, shards, from }) =>
          `${owner} ← ${shards.join(', ')}` + (from.length > 0 ? ` (from ${from.join(', ')})` : ''),
      )
      .join('; '),
  eventFailed: (lease: string, error: Error) =>
    `Could not record a Kubernetes Event on ${lease}: ${error.message} Leader election is ` +
    'unaffected; further failures of this kind are logged at debug level.',
  podLabelFailed: (label: string, error: Error, retried: boolean) =>
    `Could not set the pod role label ${label}: ${error.message} Leader election is ` +
    `unaffected${retried ? '; the write is retried with backoff until it lands' : ''}; ` +
    'further failures of this kind are logged at debug level.',
  previousHolderNotAPodName: (holder: string) =>
    `Not relabelling the previous holder ${quoted(holder)} as standby: it is not a Pod name ` +
    '(a DNS-1123 subdomain), so it cannot be a Pod of this namespace. Leader election is ' +
    'unaffected; further such holders are logged at debug level.',
  podNameRule:
    'must name this pod: set POD_NAME from the downward API (env valueFrom fieldRef ' +
    'metadata.name) or pass podName',
  podNamespaceRule:
    "must be the pod's namespace: set POD_NAMESPACE from the downward API (env valueFrom " +
    'fieldRef metadata.namespace) or pass namespace',
  labelKeyRule:
    'must be a label key: a name of at most 63 characters (letters, digits, "-", "_", "."), ' +
    'optionally prefixed by a DNS subdomain and "/", e.g. "example.com/role"',
  needsLease: (option: string, election: string, lock: string) =>
    `${option} is on for election "${election}", but it elects on ${lock}, not a Kubernetes ` +
    `Lease: ${option} does nothing there.`,
  reportingControllerRule:
    'must be a qualified name of at most 63 characters (letters, digits, "-", "_", "."), ' +
    'optionally prefixed by a DNS subdomain and "/", e.g. "example.com/billing-worker"',
} as const;
