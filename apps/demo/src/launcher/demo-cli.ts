/** `pnpm demo` flags: parsing, defaults and help. */
import { parseArgs } from 'node:util';

/** What the launcher was asked to do. */
export interface DemoCliOptions {
  replicas: number;
  /** Port of the first replica; the others follow. */
  port: number;
  /** Stop cleanly after this many seconds; undefined: run until Ctrl-C. */
  durationSeconds?: number;
  /** SIGKILL the leader every this many seconds; undefined: no chaos. */
  chaosSeconds?: number;
  kube: boolean;
  /** Run the demo as pods on the repository's one-node cluster (scripts/cluster.sh). */
  cluster: boolean;
  leaseName: string;
  /** Lease namespace (with --kube). */
  namespace?: string;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  /** Print every event line of every replica. */
  logs: boolean;
  help: boolean;
}

/** What the fields of the once-a-second status line mean (printed at start and in --help). */
export const STATUS_LEGEND = `Status line, once a second:
  holder H           the lock's holder (holderIdentity); "(down, its lease runs out)" when that
                     replica has died and the others wait out its leaseDuration
  transitions N      leaseTransitions of the current term (the fencing token; +1 per new
                     leader); "-" while no running replica leads
  <replica> ROLE     each replica's answer to GET /leader: LEADER, follower, "down" (not
                     running), "…" (no answer within 800 ms: starting or busy)
  work N             leader-only work done so far by all replicas together (cron, interval and
                     POST /jobs runs, from their logs); it grows only while someone leads
  [N shards, coordinator]
                     after a replica's role: the shards of the sharded election "orders" it
                     owns (of 16, each owned by one replica at a time), and whether it
                     coordinates them; absent when sharding is off (the file lock)
  orders work N      shard-work runs so far (one per owned shard a second, all replicas)
  !! shard S claimed by A, B
                     two replicas answered that they own shard S (never expected)
`;

export const DEMO_USAGE = `Usage: pnpm demo [options]

Runs replicas of the demo app (apps/demo) on this machine and shows which one leads.
Without --kube they share a file lock: no cluster needed.

Options:
  --replicas N         replicas to run (default 3)
  --port P             HTTP port of the first replica, the others follow (default 3001)
  --duration S         stop cleanly S seconds after the replicas are up (default: until Ctrl-C)
  --chaos S            every S seconds, SIGKILL the leader, print the failover time, restart it
  --kube               use the cluster in KUBECONFIG; without one, start the repository's
                       kube-apiserver (scripts/control-plane.sh) in .demo/control-plane
  --cluster            build the images, start the repository's one-node cluster (kubelet +
                       containerd, scripts/cluster.sh; needs root), apply apps/demo/deploy
                       verbatim and show the pods; --chaos S deletes the leader pod every S s
  --namespace NS       namespace of the Lease with --kube (default: nest-leader-demo on the
                       local control plane, the kubeconfig's namespace otherwise)
  --lease-name NAME    Lease name (default nest-leader-demo)
  --lease-duration S   leaseDurationSeconds (default 6, or LEASE_DURATION_SECONDS)
  --renew-deadline S   renewDeadlineSeconds (default 4, or RENEW_DEADLINE_SECONDS)
  --retry-period S     retryPeriodSeconds (default 1, or RETRY_PERIOD_SECONDS)
  --logs               also print every replica's JSON event lines
  -h, --help           this help

The demo's timings are short for a snappy show; the library's defaults are 15/10/2.
Logs of each replica: .demo/runs/<run>/logs/<identity>.{out,err}.log

${STATUS_LEGEND}`;

/** Thrown for a bad command line; the message is for the user. */
export class DemoUsageError extends Error {
  override name = 'DemoUsageError';
}

/**
 * Parses `argv` (without node and script) with defaults from `env`.
 * @throws DemoUsageError naming the bad flag.
 */
export function parseDemoCli(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): DemoCliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        replicas: { type: 'string' },
        port: { type: 'string' },
        duration: { type: 'string' },
        chaos: { type: 'string' },
        kube: { type: 'boolean', default: false },
        cluster: { type: 'boolean', default: false },
        namespace: { type: 'string' },
        'lease-name': { type: 'string' },
        'lease-duration': { type: 'string' },
        'renew-deadline': { type: 'string' },
        'retry-period': { type: 'string' },
        logs: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    throw new DemoUsageError((error as Error).message);
  }
  const num = (
    flag: string,
    raw: string | undefined,
    fallback: number | undefined,
    rule: { integer?: boolean; min: number; max?: number },
  ): number | undefined => {
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (
      !Number.isFinite(value) ||
      (rule.integer && !Number.isInteger(value)) ||
      value < rule.min ||
      value > (rule.max ?? Infinity)
    ) {
      const range = rule.max === undefined ? `≥ ${rule.min}` : `from ${rule.min} to ${rule.max}`;
      throw new DemoUsageError(
        `${flag} must be ${rule.integer ? 'a whole number' : 'a number'} ${range}, got "${raw}"`,
      );
    }
    return value;
  };
  const options: DemoCliOptions = {
    replicas: num('--replicas', values.replicas, 3, { integer: true, min: 1, max: 50 })!,
    port: num('--port', values.port, 3001, { integer: true, min: 1, max: 65535 })!,
    durationSeconds: num('--duration', values.duration, undefined, { min: 1 }),
    chaosSeconds: num('--chaos', values.chaos, undefined, { min: 1 }),
    kube: values.kube,
    cluster: values.cluster,
    namespace: values.namespace,
    leaseName: values['lease-name'] ?? 'nest-leader-demo',
    leaseDurationSeconds: num(
      '--lease-duration',
      values['lease-duration'] ?? env.LEASE_DURATION_SECONDS,
      6,
      { integer: true, min: 1 },
    )!,
    renewDeadlineSeconds: num(
      '--renew-deadline',
      values['renew-deadline'] ?? env.RENEW_DEADLINE_SECONDS,
      4,
      { min: 0.001 },
    )!,
    retryPeriodSeconds: num(
      '--retry-period',
      values['retry-period'] ?? env.RETRY_PERIOD_SECONDS,
      1,
      {
        min: 0.001,
      },
    )!,
    logs: values.logs,
    help: values.help,
  };
  if (options.cluster && options.kube) {
    throw new DemoUsageError(
      '--cluster and --kube exclude each other: --cluster runs its own cluster',
    );
  }
  if (options.port + options.replicas - 1 > 65535) {
    throw new DemoUsageError(
      `--port ${options.port} leaves no room for ${options.replicas} replicas`,
    );
  }
  return options;
}
