/**
 * Injection tokens of one election's providers, by election name (as @nestjs/typeorm's
 * `getDataSourceToken` and @nestjs/bullmq's `getQueueToken`). The default election's service
 * token is the `LeaderElectionService` class itself, so `constructor(election:
 * LeaderElectionService)` keeps working.
 */
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';
import { LeaderElectionService } from './leader-election.service.js';

/**
 * Token of the election's {@link LeaderElectionService}: the class itself for `'default'`,
 * else `'nest-leader:election:<name>'`. Use with `@Inject()` or `moduleRef.get()`, or use
 * `@InjectElection(name)`.
 * @param name - default `'default'`, the election of `LeaderModule.forRoot()`
 */
export function getLeaderElectionToken(
  name: string = DEFAULT_ELECTION_NAME,
): typeof LeaderElectionService | string {
  return name === DEFAULT_ELECTION_NAME ? LeaderElectionService : `nest-leader:election:${name}`;
}

/**
 * Token of the election's `ResourceLock`. Provide your own under it (the `providers` option of
 * `forRoot`/`registerElection`, or `Test…overrideProvider()`) to replace the lock the `lock`
 * option would build; nothing else changes.
 */
export function getElectionLockToken(name: string = DEFAULT_ELECTION_NAME): string {
  return `nest-leader:lock:${name}`;
}

/**
 * Token of the election's `ElectionObserver` (default: `noopElectionObserver`), passed to its
 * elector as `observer`, with the election's name as the elector's `name`.
 */
export function getElectionObserverToken(name: string = DEFAULT_ELECTION_NAME): string {
  return `nest-leader:observer:${name}`;
}

/**
 * Token of the election's elector (a `LeaderElector`, see `ManagedElector`). Replace it to
 * build the elector yourself; inject `getElectionCallbacksToken(name)` and
 * `getElectionOptionsToken(name)` to wire it.
 */
export function getLeaderElectorToken(name: string = DEFAULT_ELECTION_NAME): string {
  return `nest-leader:elector:${name}`;
}

/** Token of the `LeaderCallbacks` the election's elector must call (event order, drain). */
export function getElectionCallbacksToken(name: string = DEFAULT_ELECTION_NAME): string {
  return `nest-leader:callbacks:${name}`;
}

/** Token of the election's resolved options (`ResolvedElectionOptions`): merged, defaults applied. */
export function getElectionOptionsToken(name: string = DEFAULT_ELECTION_NAME): string {
  return `nest-leader:options:${name}`;
}
