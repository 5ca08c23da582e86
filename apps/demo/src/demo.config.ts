/**
 * The demo's configuration, read from the environment once at startup and validated, so a
 * typo fails the process with a message naming the variable instead of a pod that runs
 * without ever leading.
 */

/** Lock settings the demo accepts in `LEADER_LOCK` (a `LeaderModule` `lock` option). */
export const DEMO_LOCKS = ['auto', 'kubernetes', 'file'] as const;
export type DemoLock = (typeof DEMO_LOCKS)[number];

/** Everything the demo reads from the environment. */
export interface DemoConfig {
  /** HTTP port (`PORT`, default 3000). */
  port: number;
  /** Name of the Lease (`LEASE_NAME`, default `nest-leader-demo`). */
  leaseName: string;
  /**
   * Name of the Lease that coordinates the sharded election `orders` (`SHARD_LEASE_NAME`,
   * default `<LEASE_NAME>-orders`); its member Leases are `<name>-m-<hash>`, its assignment
   * `<name>-shards`.
   */
  shardLeaseName: string;
  /** Namespace of the Lease (`LEASE_NAMESPACE`); unset: the library's default (POD_NAMESPACE, …). */
  namespace?: string;
  /** This replica's identity (`POD_NAME`); unset: the library's default (hostname-pid). */
  identity?: string;
  /** `LEASE_DURATION_SECONDS` (whole seconds); unset: the library's default (15). */
  leaseDurationSeconds?: number;
  /** `RENEW_DEADLINE_SECONDS`; unset: the library's default (10). */
  renewDeadlineSeconds?: number;
  /** `RETRY_PERIOD_SECONDS`; unset: the library's default (2). */
  retryPeriodSeconds?: number;
  /**
   * `NEWER_TEMPLATE_WAIT_SECONDS`: how long a stopping leader leads on waiting for a pod of a
   * newer template to hand to; unset: the library's default (renewDeadline).
   */
  newerTemplateWaitSeconds?: number;
  /**
   * `NEWER_TEMPLATE_SETTLE_SECONDS`: how long a pod of a newer template must stay advertised
   * before the leader yields to it; keep it above the liveness probe's budget. Unset: the
   * library's default (the larger of 45 s and 2 × leaseDuration).
   */
  newerTemplateSettleSeconds?: number;
  /** `LEADER_LOCK`: `auto` (default), `kubernetes` or `file`. */
  lock: DemoLock;
  /** `LEADER_LOCK_DIR`: directory of the file lock (`lock` file or auto without a cluster). */
  lockDir?: string;
  /** `SHUTDOWN_GRACE_MS`: bound on draining leader-only work at shutdown; unset: library default. */
  shutdownGraceMs?: number;
  /** `METRICS` (`on`/`off`, default on): Prometheus metrics of both elections on GET /metrics. */
  metrics: boolean;
  /**
   * `KUBERNETES_EVENTS` (`on`/`off`): Events on the Leases when leadership changes. Default on
   * with `LEADER_LOCK=kubernetes`, else off (a file lock has no Lease to put them on).
   */
  kubernetesEvents: boolean;
  /**
   * `POD_ROLE_LABEL` (`on`/`off`, default off): label this replica's Pod `nest-leader/role=leader`
   * or `standby` (needs `POD_NAME`, `POD_NAMESPACE` and a Kubernetes Lease).
   */
  podRoleLabel: boolean;
  /**
   * `LEADER_HEARTBEAT_MS`: while leading, a term-bound loop writes a `heartbeat` leader-work line
   * every this many ms (the chaos harness uses it as a fine-grained work log); unset: no loop.
   */
  heartbeatMs?: number;
  /**
   * `DEMO_DEBUG_HOOKS=1`: enables `POST /debug/block-event-loop?ms=N` (blocks the event loop, as
   * a long GC or CPU starvation would). For fault-injection tests only; off by default.
   */
  debugHooks: boolean;
}

/** The environment is not a valid demo configuration; the message lists every problem. */
export class DemoConfigError extends Error {
  override name = 'DemoConfigError';

  constructor(readonly problems: readonly string[]) {
    super(`invalid demo configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads and validates the demo's configuration.
 * Timing relations (leaseDuration > renewDeadline > 1.2 × retryPeriod) are checked by the
 * library when the module starts, with its own message.
 * @throws DemoConfigError listing every invalid variable.
 */
export function loadDemoConfig(env: Env = process.env): DemoConfig {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  /** A number in [min, max] (whole if `integer`); `undefined` when unset or invalid. */
  const number = (
    name: string,
    rule: { integer: boolean; min: number; max?: number; minExclusive?: boolean },
  ): number | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    const ok =
      Number.isFinite(value) &&
      (!rule.integer || Number.isInteger(value)) &&
      (rule.minExclusive ? value > rule.min : value >= rule.min) &&
      value <= (rule.max ?? Infinity);
    if (!ok) {
      const kind = rule.integer ? 'a whole number' : 'a number';
      const range =
        rule.max !== undefined
          ? `from ${rule.min} to ${rule.max}`
          : `${rule.minExclusive ? '>' : '≥'} ${rule.min}`;
      problems.push(`${name} must be ${kind} ${range}, got "${raw}"`);
      return undefined;
    }
    return value;
  };
  const seconds = (name: string, integer: boolean) =>
    number(name, { integer, min: 0, minExclusive: true });

  /** `on` or `off`; `fallback` when unset. */
  const onOff = (name: string, fallback: boolean): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (raw === 'on' || raw === 'off') return raw === 'on';
    problems.push(`${name} must be on or off, got "${raw}"`);
    return fallback;
  };

  const port = number('PORT', { integer: true, min: 0, max: 65535 }) ?? 3000;
  const leaseName = read('LEASE_NAME') ?? 'nest-leader-demo';
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(leaseName)) {
    problems.push(
      `LEASE_NAME must be a Kubernetes object name (lowercase letters, digits, '-' and '.'), got "${leaseName}"`,
    );
  }
  const shardLeaseName = read('SHARD_LEASE_NAME') ?? `${leaseName}-orders`;
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(shardLeaseName)) {
    problems.push(
      `SHARD_LEASE_NAME must be a Kubernetes object name (lowercase letters, digits, '-' and '.'), got "${shardLeaseName}"`,
    );
  }
  const namespace = read('LEASE_NAMESPACE');
  if (namespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) {
    problems.push(`LEASE_NAMESPACE must be a namespace name, got "${namespace}"`);
  }
  const identity = read('POD_NAME');
  const lockValue = read('LEADER_LOCK') ?? 'auto';
  if (!(DEMO_LOCKS as readonly string[]).includes(lockValue)) {
    problems.push(`LEADER_LOCK must be one of ${DEMO_LOCKS.join(', ')}, got "${lockValue}"`);
  }
  const config: DemoConfig = {
    port,
    leaseName,
    shardLeaseName,
    namespace,
    identity,
    leaseDurationSeconds: seconds('LEASE_DURATION_SECONDS', true),
    renewDeadlineSeconds: seconds('RENEW_DEADLINE_SECONDS', false),
    retryPeriodSeconds: seconds('RETRY_PERIOD_SECONDS', false),
    newerTemplateWaitSeconds: seconds('NEWER_TEMPLATE_WAIT_SECONDS', false),
    newerTemplateSettleSeconds: seconds('NEWER_TEMPLATE_SETTLE_SECONDS', false),
    lock: lockValue as DemoLock,
    lockDir: read('LEADER_LOCK_DIR'),
    shutdownGraceMs: number('SHUTDOWN_GRACE_MS', { integer: true, min: 0 }),
    metrics: onOff('METRICS', true),
    kubernetesEvents: onOff('KUBERNETES_EVENTS', lockValue === 'kubernetes'),
    podRoleLabel: onOff('POD_ROLE_LABEL', false),
    heartbeatMs: number('LEADER_HEARTBEAT_MS', { integer: true, min: 10 }),
    debugHooks: false,
  };
  const debugHooks = read('DEMO_DEBUG_HOOKS') ?? '0';
  if (debugHooks === '1' || debugHooks === 'true') config.debugHooks = true;
  else if (debugHooks !== '0' && debugHooks !== 'false') {
    problems.push(`DEMO_DEBUG_HOOKS must be 1, true, 0 or false, got "${debugHooks}"`);
  }
  if (problems.length > 0) throw new DemoConfigError(problems);
  return config;
}
