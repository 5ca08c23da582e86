/**
 * The nest-leader candidate processes of one `describe` on the test cluster, each user with
 * exactly the elector's RBAC on Leases: the suite's hooks grant and revoke it and SIGKILL every
 * process left.
 */
import { after, before } from 'node:test';
import {
  CandidateProcess,
  type CandidateProcessSettings,
  leaseTarget,
} from './candidate-process.js';
import { FAST_TIMINGS } from './candidates.js';
import type { ClusterInfo } from './control-plane.js';
import { ELECTOR_VERBS, grantLeaseAccess, revokeLeaseAccess } from './rbac.js';

/** What {@link candidateFleet} starts a candidate with: its identity, and any other setting. */
export type FleetCandidateSettings = Partial<CandidateProcessSettings> & { identity: string };

/**
 * Registers, in the calling `describe`, a `before` hook that grants every one of `users`
 * {@link ELECTOR_VERBS} on Leases and an `after` hook that disposes of every process started
 * and revokes the grants. `start` is {@link CandidateProcess.startReady} of a nest-leader
 * candidate (FAST_TIMINGS unless `settings` say otherwise) on Lease `leaseName` as `user`.
 */
export function candidateFleet<User extends string>(cluster: ClusterInfo, users: readonly User[]) {
  const processes: CandidateProcess[] = [];
  before(async () => {
    for (const user of users) await grantLeaseAccess(cluster, user, ELECTOR_VERBS);
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.dispose()));
    for (const user of users) await revokeLeaseAccess(cluster, user);
  });
  const start = (
    leaseName: string,
    user: User,
    settings: FleetCandidateSettings,
  ): Promise<CandidateProcess> =>
    CandidateProcess.startReady(
      {
        implementation: 'nest-leader',
        ...leaseTarget(cluster, user, leaseName),
        timings: FAST_TIMINGS,
        ...settings,
      },
      processes,
    );
  return { processes, start };
}
