import { SystemClock } from '../../core/clock.js';
import { resolveIdentity } from '../../core/identity.js';
import { rejectUnknownOptions } from '../../core/option-names.js';
import {
  type LeaderElectionTimings,
  validateLeaderElectionTimings,
} from '../../core/leader-elector.options.js';
import { InvalidLeaderElectionOptionError } from '../../errors.js';
import { DEFAULT_ELECTION_NAME, DEFAULT_SHUTDOWN_GRACE_MS } from '../leader.constants.js';
import {
  type ElectionOptions,
  LEADER_MODULE_OPTION_NAMES,
  type LeaderModuleOptions,
} from '../leader-module-options.interfaces.js';
import { validateLeaseName, validateNamespace } from '../../kubernetes/names.js';
import { nestMessages } from '../nest.messages.js';
import { validateCatchUp } from '../schedule/catch-up.options.js';
import { pickElectorSettings } from './election-options.mapping.js';
import type { ResolvedElectionOptions } from './elections.interfaces.js';

/**
 * One election's options: `options` over `defaults` (`forRoot()`'s, for a named election;
 * a `ResourceLock` instance is never inherited: one lock is one Lease), defaults applied.
 * Checks what the Nest layer owns or uses itself — no unknown option names (a typo such as
 * `leaseDuration` would silently run with the default), `leaseName` and `namespace` (checked
 * whatever the lock, so a test on `lock: 'memory'` fails like production would),
 * `shutdownGraceMs`, and the timings (the one place their defaults are applied for an election
 * of `LeaderModule`: the gate, the catch-up horizon and `verifyTerm` read them, and the elector
 * is built with them complete); the elector and the locks check the rest when they are built
 * (see `withModuleOptionNames`).
 * @throws InvalidLeaderElectionOptionError naming the option as the user wrote it.
 */
export function resolveElectionOptions(
  name: string,
  options: ElectionOptions,
  defaults?: Partial<LeaderModuleOptions>,
): ResolvedElectionOptions {
  const election = name === DEFAULT_ELECTION_NAME ? undefined : name;
  const inherited = { ...defaults };
  if (typeof inherited.lock === 'object') delete inherited.lock;
  const merged = { ...inherited, ...definedOnly(options ?? {}) } as Partial<LeaderModuleOptions>;
  let timings: LeaderElectionTimings;
  try {
    rejectUnknownOptions(
      options ?? {},
      LEADER_MODULE_OPTION_NAMES,
      election === undefined ? 'LeaderModule' : 'LeaderModule.registerElection',
    );
    validateLeaseName(merged.leaseName, 'leaseName');
    validateCatchUp(merged.catchUp);
    if (merged.namespace !== undefined) validateNamespace(merged.namespace, 'namespace');
    timings = validateLeaderElectionTimings(merged);
  } catch (error) {
    if (!(error instanceof InvalidLeaderElectionOptionError) || election === undefined) throw error;
    throw new InvalidLeaderElectionOptionError(error.option, error.rule, error.value, election);
  }
  return {
    ...pickElectorSettings(merged),
    name,
    leaseName: merged.leaseName!,
    namespace: merged.namespace,
    identity: merged.identity ?? resolveIdentity(),
    timings,
    lock: merged.lock ?? 'auto',
    kubeConfig: merged.kubeConfig,
    shutdownGraceMs: validateShutdownGraceMs(merged.shutdownGraceMs, election),
    clock: merged.clock ?? new SystemClock(),
    catchUp: merged.catchUp,
    observability: {
      metrics: merged.metrics,
      kubernetesEvents: merged.kubernetesEvents,
      podRoleLabel: merged.podRoleLabel,
    },
  };
}

/**
 * Checks the name of a registered election.
 * @throws InvalidLeaderElectionOptionError naming `name`.
 */
export function validateElectionName(name: unknown): string {
  if (typeof name !== 'string' || name === '' || name === DEFAULT_ELECTION_NAME) {
    throw new InvalidLeaderElectionOptionError('name', nestMessages.electionNameRule, name);
  }
  return name;
}

function validateShutdownGraceMs(value: unknown, election: string | undefined): number {
  if (value === undefined) return DEFAULT_SHUTDOWN_GRACE_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidLeaderElectionOptionError(
      'shutdownGraceMs',
      nestMessages.shutdownGraceRule,
      value,
      election,
    );
  }
  return value;
}

/** `options` without keys set to `undefined`, so they do not hide `forRoot()`'s defaults. */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
