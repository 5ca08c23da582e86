/**
 * `pnpm demo`: runs replicas of the demo app on this machine, prints a status line per second
 * (holder and leaseTransitions of both elections, each replica's roles from its GET /leader), and optionally kills
 * the leader on a schedule to show failover. See launcher/demo-cli.ts for the flags; the parts
 * of a run are in launcher/ (lock-setup, status-board, chaos-rounds, run-report, stop-signals).
 */
import { mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runClusterDemo } from './launcher/cluster-demo.js';
import { REPO_ROOT } from './launcher/control-plane-process.js';
import {
  DEMO_USAGE,
  STATUS_LEGEND,
  type DemoCliOptions,
  DemoUsageError,
  parseDemoCli,
} from './launcher/demo-cli.js';
import { runChaos } from './launcher/chaos-rounds.js';
import { say } from './launcher/demo-say.js';
import { formatLeaseTable, readLease } from './launcher/kube-access.js';
import { type LockSetup, setUpFileLock, setUpKube } from './launcher/lock-setup.js';
import type { ReplicaMetrics } from './launcher/metrics-scrape.js';
import { type FailoverMeasurement, ReplicaFleet } from './launcher/replica-fleet.js';
import type { ReplicaProcess } from './launcher/replica-process.js';
import { reportRun } from './launcher/run-report.js';
import { scrapeAll, startStatusBoard, watchEvents } from './launcher/status-board.js';
import { listenForStop } from './launcher/stop-signals.js';

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
  return options.cluster ? runClusterDemo(options) : runLocalDemo(options);
}

/** Replicas on this machine until Ctrl-C or `--duration`; the exit code of `pnpm demo`. */
async function runLocalDemo(options: DemoCliOptions): Promise<number> {
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
  let exitCode = 0;
  const failovers: FailoverMeasurement[] = [];
  /** Each replica process's last scrape of GET /metrics. */
  const scrapes = new Map<ReplicaProcess, ReplicaMetrics>();
  /** leaseTransitions of the Lease before the replicas started, if it existed (--kube). */
  let initialTransitions: number | undefined;
  const stop = listenForStop(() => fleet?.kill());

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
      stop.requested.then(() => false),
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
        stop.requested,
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
      const failed = await stopReplicas(fleet, options, chaos, String(stop.signal.reason));
      if (failed && !stop.forced) exitCode = 1;
    }
    if (lock) await releaseLockSetup(lock, options.leaseName);
  }

  if (fleet) {
    const safe = reportRun(
      fleet,
      scrapes,
      options.replicas,
      initialTransitions,
      options.chaosSeconds ? failovers : undefined,
    );
    if (!safe) exitCode = 1;
  }
  say(`logs: ${relative(process.cwd(), logDir)}`);
  return exitCode;
}

/**
 * Stops the running replicas (SIGTERM: each drains and releases) and the chaos loop.
 * @returns whether a replica failed (exited non-zero, apart from one --chaos just SIGKILLed).
 */
async function stopReplicas(
  fleet: ReplicaFleet,
  options: DemoCliOptions,
  chaos: Promise<void>,
  stopReason: string,
): Promise<boolean> {
  // Ctrl-C in a terminal signals the whole foreground process group, replicas included:
  // let them report their own shutdown first, so none gets a second signal (see stop()).
  if (stopReason === 'SIGINT') await fleet.shuttingDown(1_000);
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
  return fleet.replicas.some(
    (r) =>
      r.exitStatus?.code !== 0 && !(options.chaosSeconds && r.exitStatus?.signal === 'SIGKILL'),
  );
}

/** Shows the Lease as it was left (--kube) and stops the local control plane if one was started. */
async function releaseLockSetup(lock: LockSetup, leaseName: string): Promise<void> {
  if (lock.lease) {
    const lease = await readLease(lock.lease.kc, lock.lease.namespace, leaseName).catch(
      () => undefined,
    );
    if (lease) {
      process.stdout.write(
        `\n$ kubectl get lease -n ${lock.lease.namespace}\n${formatLeaseTable([lease])}\n\n`,
      );
    }
  }
  if (lock.controlPlane) {
    say('stopping the local control plane');
    await lock.controlPlane.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`pnpm demo: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
