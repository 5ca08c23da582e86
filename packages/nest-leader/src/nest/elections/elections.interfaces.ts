/**
 * Types of the Nest layer's elections (one per `forRoot()` / `registerElection()`) that depend on
 * no class of the Nest layer (see `registered-election.interfaces.ts` for the one that does).
 */
import type { Clock } from '../../core/clock.js';
import type { LeaderElector } from '../../core/election/leader-elector.js';
import type { LeaderElectionTimings } from '../../core/leader-elector.options.js';
import type {
  LeaderLockKind,
  LeaderModuleElectorSettings,
  LeaderModuleOptions,
} from '../leader-module-options.interfaces.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { SidecarLockSpec } from '../../locks/lock-selection.js';
import type { ResourceLock } from '../../locks/resource-lock.js';
import type { CatchUpSetting } from '../schedule/catch-up.options.js';

/**
 * What the Nest layer uses of an elector: `LeaderElector`, or your own object with the same
 * members provided under `getLeaderElectorToken(name)`. Wire its leadership callbacks to the
 * ones provided under `getElectionCallbacksToken(name)`, or no event, drain or gate works.
 * `transferLeadership` is optional: without it, `LeaderElectionService.transferLeadership`
 * throws.
 */
export type ManagedElector = Pick<
  LeaderElector,
  'identity' | 'leader' | 'leaseTransitions' | 'term' | 'isLeader' | 'health' | 'start' | 'stop'
> &
  Partial<Pick<LeaderElector, 'transferLeadership'>>;

/** The `LeaderElector` settings of the module options but the timings, as given (module names). */
export type ElectorSettingsAsGiven = Omit<LeaderModuleElectorSettings, keyof LeaderElectionTimings>;

/**
 * One election's options: the user's merged over `forRoot()`'s, defaults applied. Every
 * `LeaderElector` setting but the timings is here under its module name, as given (unset ones
 * absent): the elector applies its own defaults; `identity` and `clock` are resolved here, and
 * the timings, checked and with their defaults, are `timings`.
 */
export interface ResolvedElectionOptions extends Readonly<ElectorSettingsAsGiven> {
  /** The election's name; `'default'` for `forRoot()`'s. */
  readonly name: string;
  readonly leaseName: string;
  readonly namespace?: string;
  readonly identity: string;
  /** Checked, defaults applied (`validateLeaderElectionTimings`); the elector is built with them. */
  readonly timings: LeaderElectionTimings;
  readonly lock: LeaderLockKind | SidecarLockSpec | ResourceLock;
  readonly kubeConfig?: KubeConfig | string;
  readonly shutdownGraceMs: number;
  readonly clock: Clock;
  /** Default catch-up of the election's leader-only recurring jobs (as given). */
  readonly catchUp?: CatchUpSetting;
  /** Which observers to build (see `LeaderModuleOptions`); all off by default. */
  readonly observability: Pick<
    LeaderModuleOptions,
    'metrics' | 'kubernetesEvents' | 'podRoleLabel'
  >;
}
