/**
 * `pnpm demo`: runs replicas of the demo app on this machine, prints a status line per second
 * (holder and leaseTransitions of both elections, each replica's roles from its GET /leader), and optionally kills
 * the leader on a schedule to show failover. See launcher/demo-cli.ts for the flags.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { checkLeaderTerms, type LeaderStatus } from './demo-events.js';
import { SHARD_ELECTION } from './demo.constants.js';
import {
  DEMO_USAGE,
  STATUS_LEGEND,
  type DemoCliOptions,
  DemoUsageError,
  parseDemoCli,
} from './launcher/demo-cli.js';
import {
  applyManifests,
  DEMO_NAMESPACE,
  DEMO_SERVICE_ACCOUNT,
  loadDemoManifests,
} from './launcher/demo-manifests.js';
import { runClusterDemo } from './launcher/cluster-demo.js';
import { formatLeaseTable, readLease, serviceAccountKubeConfig } from './launcher/kube-access.js';
import {
  type ControlPlaneProcess,
  REPO_ROOT,
  startControlPlaneProcess,
} from './launcher/control-plane-process.js';
import { type ReplicaMetrics, scrapeReplica } from './launcher/metrics-scrape.js';
import { type FailoverMeasurement, ReplicaFleet } from './launcher/replica-fleet.js';
import type { ReplicaProcess } from './launcher/replica-process.js';

const startedAt = performance.now();

/** `[ 12.3s] message` */
function say(message: string): void {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`[${seconds}s] ${message}\n`);
}

/** Where the replicas' Lease lives and how they reach it. */
interface LockSetup {
  /** Environment for every replica. */
  env: Record<string, string | undefined>;
  /** Human description for the header. */
  description: string;
  /** With --kube: reads the Lease for the status line. */
  lease?: { kc: KubeConfig; namespace: string };
  controlPlane?: ControlPlaneProcess;
}

async function setUpFileLock(options: DemoCliOptions, runDir: string): Promise<LockSetup> {
  const lockDir = join(runDir, 'lock');
  mkdirSync(lockDir, { recursive: true });
  return {
    // `file` rather than `auto`: on a machine with a ~/.kube/config, `auto` would pick that
    // cluster, and `pnpm demo` must never write a Lease into someone's real cluster.
    env: { LEADER_LOCK: 'file', LEADER_LOCK_DIR: lockDir, KUBECONFIG: undefined },
    description: `file lock in ${relative(process.cwd(), lockDir) || lockDir} (lease ${options.leaseName})`,
  };
}

async function setUpKube(options: DemoCliOptions, signal: AbortSignal): Promise<LockSetup> {
  const kubeconfig = process.env.KUBECONFIG;
  if (kubeconfig) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const namespace =
      options.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
    return {
      env: { LEADER_LOCK: 'kubernetes', KUBECONFIG: kubeconfig, LEASE_NAMESPACE: namespace },
      description: `Lease ${namespace}/${options.leaseName} on ${kc.getCurrentCluster()?.server} (KUBECONFIG, your credentials)`,
      lease: { kc, namespace },
    };
  }

  const stateDir = join(REPO_ROOT, '.demo', 'control-plane');
  say(
    `no KUBECONFIG: starting the local kube-apiserver + etcd (state in ${relative(process.cwd(), stateDir)})`,
  );
  say('the first start builds it from source; that takes several minutes');
  // Its own process group, like the replicas: on Ctrl-C the launcher stops the replicas first
  // (they release the Lease through this API server), then the control plane.
  let starting = true; // its progress until it is ready, not the server's log after
  const controlPlane = await startControlPlaneProcess({
    stateDir,
    progress: (line) => starting && say(`  ${line}`),
    signal,
    detached: true,
  });
  starting = false;
  try {
    const admin = new KubeConfig();
    admin.loadFromFile(controlPlane.kubeconfigPath);
    const namespace = options.namespace ?? DEMO_NAMESPACE;
    // The demo's own RBAC from deploy/: Namespace, ServiceAccount, Role (create on leases;
    // get/update/watch on this Lease) and RoleBinding. The replicas then run as that
    // ServiceAccount, like pods.
    const rbac = loadDemoManifests({
      namespace,
      kinds: ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding'],
      leaseName: options.leaseName,
    });
    const applied = await applyManifests(admin, rbac);
    say(`applied ${applied.map((a) => `${a.kind}/${a.name}`).join(', ')} from apps/demo/deploy`);
    const sa = await serviceAccountKubeConfig(admin, namespace, DEMO_SERVICE_ACCOUNT);
    const saKubeconfig = join(REPO_ROOT, '.demo', `kubeconfig-${DEMO_SERVICE_ACCOUNT}`);
    writeFileSync(saKubeconfig, sa.exportConfig(), { mode: 0o600 });
    return {
      env: { LEADER_LOCK: 'kubernetes', KUBECONFIG: saKubeconfig, LEASE_NAMESPACE: namespace },
      description:
        `Lease ${namespace}/${options.leaseName} on ${admin.getCurrentCluster()?.server}, ` +
        `as system:serviceaccount:${namespace}:${DEMO_SERVICE_ACCOUNT}`,
      lease: { kc: admin, namespace },
      controlPlane,
    };
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
}

/** Median and max of a list of milliseconds, as seconds. */
function summarize(values: readonly number[]): string {
  if (values.length === 0) return 'none';
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return `n=${sorted.length} median ${(median / 1000).toFixed(2)} s, max ${(sorted.at(-1)! / 1000).toFixed(2)} s`;
}

async function main(): Promise<number> {
  let options: DemoCliOptions;
  try {
    options = parseDemoCli(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof DemoUsageError)) throw error;
    process.stderr.write(`pnpm demo: ${error.message}\n\n${DEMO_USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(DEMO_USAGE);
    return 0;
  }
  if (options.cluster) return runClusterDemo(options);

  const runDir = join(
    REPO_ROOT,
    '.demo',
    'runs',
    `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`,
  );
  const logDir = join(runDir, 'logs');
  mkdirSync(logDir, { recursive: true });

  let fleet: ReplicaFleet | undefined;
  let lock: LockSetup | undefined;
  let board: { stop(): void } | undefined;
  let chaos: Promise<void> = Promise.resolve();
  /** Aborted once the launcher starts stopping: ends the chaos loop. */
  const stopping = new AbortController();
  let forced = false;
  let exitCode = 0;
  const failovers: FailoverMeasurement[] = [];
  /** Each replica process's last scrape of GET /metrics. */
  const scrapes = new Map<ReplicaProcess, ReplicaMetrics>();
  /** leaseTransitions of the Lease before the replicas started, if it existed (--kube). */
  let initialTransitions: number | undefined;

  // First Ctrl-C / SIGTERM: stop cleanly. Second: SIGKILL the replicas.
  const stop = new AbortController();
  let firstSignalAtMs = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stop.signal.aborted) {
      firstSignalAtMs = performance.now();
      stop.abort(signal);
      return;
    }
    // One Ctrl-C can arrive twice: from the terminal (to the whole foreground process group)
    // and forwarded by `pnpm demo`. Only a second press, later, forces the stop.
    if (performance.now() - firstSignalAtMs < 1_000) return;
    forced = true;
    say(`${signal} again: killing every replica`);
    fleet?.kill();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const stopRequested = new Promise<string>((resolve) =>
    stop.signal.addEventListener('abort', () => resolve(String(stop.signal.reason)), {
      once: true,
    }),
  );

  try {
    lock = options.kube
      ? await setUpKube(options, stop.signal)
      : await setUpFileLock(options, runDir);
    fleet = new ReplicaFleet({
      port: (i) => options.port + i,
      env: {
        LEASE_NAME: options.leaseName,
        LEASE_DURATION_SECONDS: String(options.leaseDurationSeconds),
        RENEW_DEADLINE_SECONDS: String(options.renewDeadlineSeconds),
        RETRY_PERIOD_SECONDS: String(options.retryPeriodSeconds),
        ...lock.env,
      },
      logDir,
    });
    say(
      `starting ${options.replicas} replicas on ports ${options.port}-${options.port + options.replicas - 1}: ` +
        `${lock.description}; leaseDuration ${options.leaseDurationSeconds} s, renewDeadline ` +
        `${options.renewDeadlineSeconds} s, retryPeriod ${options.retryPeriodSeconds} s`,
    );
    watchEvents(fleet, options);
    // A Lease left by an earlier run: the replicas' first sighting of it is where their count
    // of leader changes starts.
    if (lock.lease) {
      const existing = await readLease(
        lock.lease.kc,
        lock.lease.namespace,
        options.leaseName,
      ).catch(() => undefined);
      initialTransitions = existing?.spec?.leaseTransitions;
    }
    const started = await Promise.race([
      fleet.start(options.replicas).then(() => true),
      stopRequested.then(() => false),
    ]);
    if (started) {
      say(
        `replicas up: ${fleet.replicas.map((r) => `${r.identity} (pid ${r.pid}, :${r.port})`).join(', ')}. ` +
          'Ctrl-C stops them cleanly.',
      );
      say(
        `metrics (Prometheus text format): ${fleet.replicas.map((r) => `http://127.0.0.1:${r.port}/metrics`).join(' ')}`,
      );
      process.stdout.write(`\n${STATUS_LEGEND}\n`);
      board = startStatusBoard(fleet, lock, options.leaseName, scrapes);
      if (options.chaosSeconds) chaos = runChaos(fleet, options, failovers, stopping.signal);
      const reason = await Promise.race([
        stopRequested,
        options.durationSeconds
          ? sleep(options.durationSeconds * 1000, undefined, { ref: false }).then(
              () => `--duration ${options.durationSeconds}`,
            )
          : new Promise<string>(() => {}),
      ]);
      say(`${reason}: stopping`);
    }
  } catch (error) {
    if (!stop.signal.aborted) {
      process.stderr.write(`pnpm demo: ${(error as Error).message}\n`);
      exitCode = 1;
    }
  } finally {
    stopping.abort();
    board?.stop();
    if (fleet && fleet.running.length > 0) {
      await scrapeAll(fleet.running, scrapes);
      // Ctrl-C in a terminal signals the whole foreground process group, replicas included:
      // let them report their own shutdown first, so none gets a second signal (see stop()).
      if (String(stop.signal.reason) === 'SIGINT') await fleet.shuttingDown(1_000);
      say(
        `stopping ${fleet.running.length} replicas: SIGTERM, each drains its leader-only work and releases the Lease`,
      );
      await fleet.stop();
      await chaos.catch(() => {});
      say(
        fleet.replicas
          .map((r) => `${r.identity} exited ${r.exitStatus?.code ?? r.exitStatus?.signal}`)
          .join(', '),
      );
      // A replica --chaos just SIGKILLed (not restarted yet) is no failure of the demo.
      const failed = fleet.replicas.filter(
        (r) =>
          r.exitStatus?.code !== 0 && !(options.chaosSeconds && r.exitStatus?.signal === 'SIGKILL'),
      );
      if (failed.length > 0 && !forced) exitCode = 1;
    }
    if (lock?.lease) {
      const lease = await readLease(lock.lease.kc, lock.lease.namespace, options.leaseName).catch(
        () => undefined,
      );
      if (lease) {
        process.stdout.write(
          `\n$ kubectl get lease -n ${lock.lease.namespace}\n${formatLeaseTable([lease])}\n\n`,
        );
      }
    }
    if (lock?.controlPlane) {
      say('stopping the local control plane');
      await lock.controlPlane.stop();
    }
  }

  if (fleet) {
    const work = fleet.leaderWork();
    const { terms, violations } = checkLeaderTerms(work);
    say(
      `${terms.length} terms, ${work.length} leader-work lines, ` +
        (violations.length === 0
          ? 'no two replicas worked in overlapping terms'
          : `VIOLATIONS:\n  ${violations.join('\n  ')}`),
    );
    if (violations.length > 0) exitCode = 1;
    const shardWork = fleet.shardWork();
    const shard = checkLeaderTerms(shardWork);
    say(
      `${SHARD_ELECTION}: ${shard.terms.length} terms, ${shardWork.length} shard-work lines, ` +
        (shard.violations.length === 0
          ? 'no two replicas worked in overlapping terms'
          : `VIOLATIONS:\n  ${shard.violations.join('\n  ')}`),
    );
    if (shard.violations.length > 0) exitCode = 1;
  }
  if (fleet && scrapes.size > 0) {
    for (const line of metricsSummary(fleet, scrapes, options.replicas, initialTransitions)) {
      say(line);
    }
  }
  if (options.chaosSeconds) {
    say(
      `failover after SIGKILL: new leader ${summarize(failovers.map((f) => f.acquiredMs))}; ` +
        `first leader-work ${summarize(failovers.map((f) => f.firstWorkMs))}`,
    );
  }
  say(`logs: ${relative(process.cwd(), logDir)}`);
  return exitCode;
}

/** Prints leadership changes and exits as they happen. */
function watchEvents(fleet: ReplicaFleet, options: DemoCliOptions): void {
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
function startStatusBoard(
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
      const shardLeaders = statuses.filter((s) => s?.shard?.isLeader === true) as LeaderStatus[];
      const shardElection = SHARD_ELECTION;
      let shardHolder =
        shardLeaders[0]?.identity ?? statuses.find((s) => s?.shard?.name)?.shard.name ?? '-';
      let shardTransitions = shardLeaders[0]?.shard.leaseTransitions ?? '-';
      let holder = leaders[0]?.identity ?? statuses.find((s) => s?.name)?.name ?? '-';
      let transitions = leaders[0]?.leaseTransitions ?? '-';
      if (lock.lease) {
        // With --kube, the holder and transitions come from the Lease itself.
        const lease = await readLease(lock.lease.kc, lock.lease.namespace, leaseName).catch(
          () => undefined,
        );
        holder = lease?.spec?.holderIdentity || '<none>';
        transitions = lease?.spec?.leaseTransitions ?? '-';
        const shardLease = await readLease(
          lock.lease.kc,
          lock.lease.namespace,
          `${leaseName}-${shardElection}`,
        ).catch(() => undefined);
        shardHolder = shardLease?.spec?.holderIdentity || '<none>';
        shardTransitions = shardLease?.spec?.leaseTransitions ?? '-';
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
          return `${r.identity} ${role}${s?.shard?.isLeader ? `+${shardElection}` : ''}`;
        })
        .join(' · ');
      const warning =
        (leaders.length > 1 ? ` · !! ${leaders.length} replicas claim to lead` : '') +
        (shardLeaders.length > 1
          ? ` · !! ${shardLeaders.length} replicas claim to lead ${shardElection}`
          : '');
      say(
        `holder ${holder} · transitions ${transitions} · ${shardElection} holder ${shardHolder} ` +
          `(transitions ${shardTransitions}) · ${roles} · work ${fleet.leaderWork().length}` +
          ` · ${shardElection} work ${fleet.shardWork().length}${warning}`,
      );
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), 1000);
  return { stop: () => clearInterval(timer) };
}

/** Scrapes every replica in `replicas` and keeps what answered in `scrapes`. */
async function scrapeAll(
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

/**
 * The end summary of the scraped metrics: per replica process and election, what its last scrape
 * said; then, for the default election, whether the leader changes each replica counted agree
 * with the Lease (from the first acquisition's leaseTransitions to the last one's), and whether
 * the terms the replicas counted agree with the acquisitions in their event logs.
 */
function metricsSummary(
  fleet: ReplicaFleet,
  scrapes: Map<ReplicaProcess, ReplicaMetrics>,
  initialReplicas: number,
  initialTransitions: number | undefined,
): string[] {
  const lines = ['metrics, from each replica’s last scrape of GET /metrics:'];
  for (const replica of fleet.history) {
    const metrics = scrapes.get(replica);
    if (!metrics) continue;
    const elections = [...metrics]
      .map(
        ([name, m]) =>
          `${name}: leader ${m.masterStatus}, terms started ${m.termsStarted}, leader changes ` +
          `seen ${m.transitions}, lock errors ${m.lockErrors}, @LeaderOnly ran ${m.leaderOnlyRan}` +
          ` skipped ${m.leaderOnlySkipped}`,
      )
      .join(' · ');
    lines.push(`  ${replica.identity} (pid ${replica.pid}): ${elections}`);
  }
  const acquired = fleet
    .events()
    .filter((e) => e.event.event === 'leadership-acquired')
    .map((e) => (e.event as { leaseTransitions: number }).leaseTransitions);
  if (acquired.length > 0) {
    // Each replica counts the changes after its first sighting of the Lease: from the value it
    // had before the run, or from the first acquisition when this run created it.
    const from = initialTransitions ?? acquired[0]!;
    const changes = acquired.at(-1)! - from;
    const whole = fleet.history
      .slice(0, initialReplicas)
      .filter((r) => r.running || r.exitStatus?.code === 0);
    const seen = whole.map((r) => ({
      identity: r.identity,
      transitions: scrapes.get(r)?.get('default')?.transitions,
    }));
    const agree = seen.every((s) => s.transitions === changes);
    lines.push(
      `  default: the Lease changed leader ${changes} times (leaseTransitions ${from} → ` +
        `${acquired.at(-1)}); replicas up the whole run saw ${seen.map((s) => `${s.identity} ${s.transitions ?? '?'}`).join(', ')}` +
        (agree ? ' — agree' : ' — differ (a follower may not have polled the last change yet)'),
    );
    const termsCounted = [...scrapes.values()].reduce(
      (sum, m) => sum + (m.get('default')?.termsStarted ?? 0),
      0,
    );
    lines.push(
      `  default: terms started, all replicas' metrics: ${termsCounted}; acquisitions in their ` +
        `event logs: ${acquired.length}${termsCounted === acquired.length ? ' — agree' : ''}`,
    );
  }
  return lines;
}

/** Every `chaosSeconds`: SIGKILL the leader, measure the failover, restart the killed replica. */
async function runChaos(
  fleet: ReplicaFleet,
  options: DemoCliOptions,
  failovers: FailoverMeasurement[],
  stopping: AbortSignal,
): Promise<void> {
  const timeoutMs = (options.leaseDurationSeconds + 5 * options.retryPeriodSeconds + 10) * 1000;
  while (!stopping.aborted) {
    try {
      await sleep(options.chaosSeconds! * 1000, undefined, { signal: stopping });
    } catch {
      return; // stopping
    }
    const leader = fleet.leader();
    if (!leader) {
      say('chaos: no leader right now, skipping this round');
      continue;
    }
    const index = fleet.replicas.indexOf(leader.replica);
    say(`chaos: SIGKILL ${leader.replica.identity} (the leader, pid ${leader.replica.pid})`);
    try {
      const failover = await fleet.failover('SIGKILL', timeoutMs);
      failovers.push(failover);
      say(
        `chaos: failover ${failover.from} → ${failover.to} in ${(failover.acquiredMs / 1000).toFixed(2)} s ` +
          `(first leader-work after ${(failover.firstWorkMs / 1000).toFixed(2)} s), leaseTransitions ` +
          `${failover.previousLeaseTransitions} → ${failover.leaseTransitions}`,
      );
    } catch (error) {
      if (stopping.aborted) return;
      say(`chaos: ${(error as Error).message}`);
    }
    if (stopping.aborted) return;
    const restarted = await fleet.restart(index);
    say(`chaos: restarted ${restarted.identity} (pid ${restarted.pid}) as a follower`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`pnpm demo: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
