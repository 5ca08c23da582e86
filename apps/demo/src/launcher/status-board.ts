/** What the local demo prints while it runs: leadership changes as they happen, a status line a second. */
import type { LeaderStatus } from '../demo-events.js';
import { SHARDED_ELECTION } from '../demo.constants.js';
import type { DemoCliOptions } from './demo-cli.js';
import { formatLeaseTable, readLease } from './kube-access.js';
import type { LockSetup } from './lock-setup.js';
import { type ReplicaMetrics, scrapeReplica } from './metrics-scrape.js';
import type { ReplicaFleet } from './replica-fleet.js';
import type { ReplicaProcess } from './replica-process.js';
import { say } from './demo-say.js';

/** Prints leadership changes and exits as they happen. */
export function watchEvents(fleet: ReplicaFleet, options: DemoCliOptions): void {
  const seen = new WeakSet<object>();
  const attach = () => {
    for (const replica of fleet.history) {
      if (seen.has(replica)) continue;
      seen.add(replica);
      replica.onEvent(({ event }) => {
        if (options.logs) process.stdout.write(`        ${JSON.stringify(event)}\n`);
        if (event.event === 'leadership-acquired') {
          say(`${event.identity} acquired the Lease (leaseTransitions ${event.leaseTransitions})`);
        } else if (event.event === 'leadership-lost') {
          say(`${event.identity} is no longer leader (term ${event.leaseTransitions} ended)`);
        }
      });
      void replica.exited.then((exit) => {
        if (exit.code !== 0 && exit.signal !== 'SIGKILL') {
          say(
            `${replica.identity} exited (${exit.code ?? exit.signal}):\n${replica.stderrTail.trim().split('\n').at(-1)}`,
          );
        }
      });
    }
  };
  attach();
  // Restarted replicas are new processes: pick them up.
  const timer = setInterval(attach, 200);
  timer.unref();
}

/** Polls every replica's GET /leader once a second and prints one status line. */
export function startStatusBoard(
  fleet: ReplicaFleet,
  lock: LockSetup,
  leaseName: string,
  scrapes: Map<ReplicaProcess, ReplicaMetrics>,
): { stop(): void } {
  let busy = false;
  let lastHolder: string | undefined;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const replicas = [...fleet.replicas];
      const [statuses] = await Promise.all([
        Promise.all(
          replicas.map((r) => (r.running ? r.leaderStatus(800) : Promise.resolve(undefined))),
        ),
        scrapeAll(
          replicas.filter((r) => r.running),
          scrapes,
        ),
      ]);
      const leaders = statuses.filter((s): s is LeaderStatus => s?.isLeader === true);
      let holder = leaders[0]?.identity ?? statuses.find((s) => s?.name)?.name ?? '-';
      let transitions = leaders[0]?.leaseTransitions ?? '-';
      if (lock.lease) {
        // With --kube, the holder and transitions come from the Lease itself.
        const lease = await readLease(lock.lease.kc, lock.lease.namespace, leaseName).catch(
          () => undefined,
        );
        holder = lease?.spec?.holderIdentity || '<none>';
        transitions = lease?.spec?.leaseTransitions ?? '-';
        if (lease && holder !== lastHolder) {
          lastHolder = holder;
          process.stdout.write(
            `\n$ kubectl get lease -n ${lock.lease.namespace}\n${formatLeaseTable([lease])}\n\n`,
          );
        }
      } else if (holder !== '-' && !replicas.some((r) => r.identity === holder && r.running)) {
        holder = `${holder} (down, its lease runs out)`;
      }
      const roles = replicas
        .map((r, i) => {
          const s = statuses[i];
          const role = !r.running ? 'down' : !s ? '…' : s.isLeader ? 'LEADER' : 'follower';
          return `${r.identity} ${role}${shardsOf(s)}`;
        })
        .join(' · ');
      const shardWork = fleet.shardWork().length;
      say(
        `holder ${holder} · transitions ${transitions} · ${roles} · work ${fleet.leaderWork().length}` +
          (statuses.some((s) => s?.shards) ? ` · ${SHARDED_ELECTION} work ${shardWork}` : '') +
          shardWarning(statuses) +
          (leaders.length > 1 ? ` · !! ${leaders.length} replicas claim to lead` : ''),
      );
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), 1000);
  return { stop: () => clearInterval(timer) };
}

/**
 * ` [5 shards, coordinator]`: the shards of `orders` a replica owns by its own GET /leader
 * (empty when sharding is off or it did not answer).
 */
function shardsOf(status: LeaderStatus | undefined): string {
  const shards = status?.shards;
  if (!shards) return '';
  return ` [${shards.owned.length} shards${shards.coordinator ? ', coordinator' : ''}]`;
}

/** ` · !! shard 3 claimed by demo-1, demo-2`: a shard two replicas say they own at once. */
function shardWarning(statuses: readonly (LeaderStatus | undefined)[]): string {
  const owners = new Map<number, string[]>();
  for (const status of statuses) {
    for (const shard of status?.shards?.owned ?? []) {
      owners.set(shard, [...(owners.get(shard) ?? []), status!.identity]);
    }
  }
  return [...owners]
    .filter(([, who]) => who.length > 1)
    .map(([shard, who]) => ` · !! shard ${shard} claimed by ${who.join(', ')}`)
    .join('');
}

/** Scrapes every replica in `replicas` and keeps what answered in `scrapes`. */
export async function scrapeAll(
  replicas: readonly ReplicaProcess[],
  scrapes: Map<ReplicaProcess, ReplicaMetrics>,
): Promise<void> {
  await Promise.all(
    replicas.map(async (r) => {
      const metrics = await scrapeReplica(r.port);
      if (metrics) scrapes.set(r, metrics);
    }),
  );
}
