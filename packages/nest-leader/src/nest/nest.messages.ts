/**
 * The texts of the Nest layer: module, elections, `@LeaderOnly()`, health indicator, leadership
 * events. The messages of its typed errors are in `errors.messages.ts`.
 */

import { errorText, quoted } from '../format.js';

/** What the Nest layer logs once when the elector starts. */
export interface NestStartDetails {
  /** The election's name (`'default'` for `forRoot()`'s). */
  election: string;
  identity: string;
  /** The lock's description, e.g. `Lease default/billing-worker`. */
  lock: string;
  kind: string;
  namespace?: string;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  shutdownGraceMs: number;
}
export const nestMessages = {
  asyncOptionsFactoryMissing: (election: string) =>
    `LeaderModule.registerElectionAsync({ name: '${election}' }) needs useFactory, useClass or useExisting.`,
  leaderOnlyTarget: (key: string) =>
    `@LeaderOnly() applies to methods and classes, not to "${key}".`,
  leaderOnlyStatic: (className: string, methodName: string) =>
    `@LeaderOnly() cannot gate the static method ${className}.${methodName}(): LeaderModule ` +
    'binds the instances Nest creates, and a static method has none. Make it an instance ' +
    `method of a provider (add ${className} to a module's providers).`,
  staticHandler: (className: string, methodName: string) =>
    `A leadership event handler cannot be static (${className}.${methodName}()): handlers are ` +
    'found on the instances Nest creates. Make it an instance method of a provider.',
  classNotProvided: (className: string, methods: readonly string[]) =>
    `${className} has methods that run only when Nest creates it (${methods.join(', ')}), but ` +
    'no module of this application provides it, so they never run on any replica. Add ' +
    `${className} to a module's providers (controllers, for a controller).`,
  starting: (d: NestStartDetails) =>
    `Leader election ${d.election === 'default' ? '' : `"${d.election}" `}starting: identity "${d.identity}", lock ${d.kind} (${d.lock})` +
    `${d.namespace ? `, namespace "${d.namespace}"` : ''}, leaseDuration ${d.leaseDurationSeconds}s, ` +
    `renewDeadline ${d.renewDeadlineSeconds}s, retryPeriod ${d.retryPeriodSeconds}s, ` +
    `shutdownGrace ${d.shutdownGraceMs}ms.`,
  shutdownGraceRule: 'must be a finite number of milliseconds, zero or more',
  shardedElectionStarting: (d: {
    election: string;
    identity: string;
    leaseName: string;
    shards: number;
    store: string;
    leaseDurationSeconds: number;
    renewDeadlineSeconds: number;
    retryPeriodSeconds: number;
  }) =>
    `Sharded election ${quoted(d.election)} starting: ${d.shards} shards, identity ${quoted(d.identity)}, ` +
    `Lease ${quoted(d.leaseName)} (${d.store}), leaseDuration ${d.leaseDurationSeconds}s, ` +
    `renewDeadline ${d.renewDeadlineSeconds}s, retryPeriod ${d.retryPeriodSeconds}s.`,
  shardedElectionStopped: (election: string) =>
    `Sharded election ${quoted(election)} stopped: its shards drained and its member Lease released.`,
  shardedLockRule:
    "must be a Lease lock ('kubernetes', or 'auto' finding a cluster) for a sharded election, or pass shardStore",
  notLeader: (leader: string | undefined) =>
    leader
      ? `This replica is not the leader; the leader is ${quoted(leader)}.`
      : 'This replica is not the leader; no leader is known yet.',
  skipped: (className: string, methodName: string, leader: string | undefined) =>
    `Skipped ${className}.${methodName}(): not the leader (leader: ${leader ? quoted(leader) : 'none'}); ` +
    'its further skips are not logged until this replica has led.',
  scheduleModuleMissing: (handlers: readonly string[]) =>
    `${handlers.join(', ')} ${handlers.length === 1 ? 'has' : 'have'} @Cron/@Interval/@Timeout ` +
    'and @LeaderOnly(), but ScheduleModule.forRoot() is not imported: these jobs never run on ' +
    'any replica. Import ScheduleModule.forRoot() (from @nestjs/schedule) in the root module.',
  shutdownHooksMissing: (graceMs: number) =>
    `No SIGTERM handler ${graceMs / 1000} s after start: call app.enableShutdownHooks() in ` +
    'main.ts, or a SIGTERM (every Kubernetes rollout) kills the leader without draining its ' +
    'leader-only work or releasing the Lease, and the others wait a whole leaseDuration ' +
    '(15 s by default) instead of about a second.',
  healthWithoutLeaderModule:
    'LeaderHealthIndicator needs LeaderModule: import LeaderModule.forRoot() in the root module ' +
    '(it is global), then inject LeaderHealthIndicator wherever you need it; it need not be ' +
    'listed in any providers.',
  terminusMissing: (error: unknown) =>
    `LeaderHealthIndicator needs @nestjs/terminus (npm install @nestjs/terminus; the 11 major for ` +
    `a CommonJS Nest 11 app): ${errorText(error)}`,
  drainTimedOut: (election: string, count: number, graceMs: number) =>
    `${count} leader-only invocation(s) of election "${election}" still running after ` +
    `shutdownGraceMs (${graceMs}ms); giving up leadership anyway.`,
  electionNameRule:
    "must be a non-empty string other than 'default' (the election of LeaderModule.forRoot())",
  handlerFailed: (handler: string, event: string, error: unknown) =>
    `Leadership ${event} handler ${handler} failed; ignored: ${errorText(error)}`,
  nonStaticHandler: (handler: string) =>
    `Cannot register leadership event handler ${handler}: it is defined in a request-scoped or ` +
    'transient provider.',
  podCreationUnknown: (
    election: string,
    podName: string | undefined,
    namespace: string | undefined,
  ) =>
    `Election "${election}" advertises a pod template but cannot name its Pod to read its ` +
    `creationTimestamp (POD_NAME ${podName ? quoted(podName) : 'unset'}, POD_NAMESPACE ` +
    `${namespace ? quoted(namespace) : 'unset'}; set both from the downward API, or pass ` +
    'podCreationTimestamp): its template is dated by its container start, so during a ' +
    'rollout an old pod whose container restarts may look like the newest template.',
  podCreationReadFailed: (election: string, error: unknown) =>
    `Election "${election}" could not read its Pod's creationTimestamp (${errorText(error)}); ` +
    'its template is dated by its container start, so during a rollout an old pod whose ' +
    'container restarts may look like the newest template. Or pass podCreationTimestamp.',
  verifyRule: "must be 'before' or 'before-and-after' (or absent: no verification)",
} as const;
