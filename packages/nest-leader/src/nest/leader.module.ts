import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { LeaderModuleUsageError } from '../errors.js';
import {
  createElectionProviders,
  electionExports,
  getElectionGivenOptionsToken,
} from './elections/election.providers.js';
import { validateElectionName } from './elections/election-options.resolver.js';
import { DEFAULT_ELECTION_NAME } from './leader.constants.js';
import { LeaderCoreModule } from './leader-core.module.js';
import {
  ASYNC_OPTIONS_TYPE,
  ConfigurableModuleClass,
  LEADER_MODULE_OPTIONS,
  OPTIONS_TYPE,
} from './leader.module-definition.js';
import type {
  ElectionOptions,
  ElectionOptionsFactory,
  RegisterElectionAsyncOptions,
  RegisterElectionOptions,
} from './leader-module-options.interfaces.js';
import {
  createShardedElectionProviders,
  shardedElectionExports,
} from './sharded-elections/sharded-election.providers.js';
import type { ShardedElectionModuleOptions } from './sharded-elections/sharded-election-options.interfaces.js';
import { nestMessages } from './nest.messages.js';

/**
 * Kubernetes Lease leader election for a Nest application: `forRoot()` configures the default
 * election (`'default'`: `@LeaderOnly()`, `LeaderElectionService`) and the defaults of named
 * ones; `registerElection({ name, leaseName })` adds a named election with its own Lease,
 * timings, lock, identity and terms (`@LeaderOnly(name)`, `@InjectElection(name)`), in the
 * style of @nestjs/bullmq's `forRoot` + `registerQueue`. Modules are global unless
 * `isGlobal: false`.
 */
@Module({})
export class LeaderModule extends ConfigurableModuleClass {
  /**
   * Configures the default election (and the defaults of named elections) with static options.
   * @throws InvalidLeaderElectionOptionError (when the application is created) naming the
   *   invalid option and its rule.
   * @example `LeaderModule.forRoot({ leaseName: 'billing-worker' })`
   */
  static override forRoot(options: typeof OPTIONS_TYPE): DynamicModule {
    const { isGlobal: _isGlobal, providers, ...given } = options;
    // The default election's options, handed over as registerElection() hands a named one's.
    return withDefaultElection(super.forRoot(options), providers, { useValue: given });
  }

  /**
   * Configures the default election with options built by a provider: `{ imports, inject,
   * useFactory }`, `{ useClass }` or `{ useExisting }` (a `LeaderModuleOptionsFactory`).
   * @example
   * ```ts
   * LeaderModule.forRootAsync({
   *   imports: [ConfigModule],
   *   inject: [ConfigService],
   *   useFactory: (config: ConfigService) => ({ leaseName: config.getOrThrow('LEASE_NAME') }),
   * })
   * ```
   */
  static override forRootAsync(options: typeof ASYNC_OPTIONS_TYPE): DynamicModule {
    return withDefaultElection(super.forRootAsync(options), options.providers, {
      useExisting: LEADER_MODULE_OPTIONS,
    });
  }

  /**
   * Adds a named election: its own Lease (`leaseName`), and any option of `forRoot()` to
   * override the defaults `forRoot()` set (without `forRoot()`, the library's defaults).
   * @throws InvalidLeaderElectionOptionError for an empty name or `'default'` (at once), and
   *   for invalid options when the application is created, naming the option and the election.
   * With `shards`, the election is sharded: N shards spread over the replicas, each owned by one
   * replica at a time; its `@LeaderOnly(name)` methods run once per owned shard
   * (`currentShard(name)`), and `@InjectElection(name)` injects a `ShardedElectionService`
   * (see the docs' "Sharded leadership").
   * @example `LeaderModule.registerElection({ name: 'shard-a', leaseName: 'orders-shard-a' })`
   * @example `LeaderModule.registerElection({ name: 'orders', leaseName: 'orders', shards: 64 })`
   */
  static registerElection(options: RegisterElectionOptions): DynamicModule {
    const { name, isGlobal, providers, ...given } = options;
    const { shards, drainTimeoutSeconds, shardStore, ...electionOptions } = given;
    if (shards !== undefined) {
      const sharded = { shards, drainTimeoutSeconds, shardStore };
      return shardedElectionModule(validateElectionName(name), isGlobal, providers, sharded, [
        { provide: getElectionGivenOptionsToken(name), useValue: electionOptions },
      ]);
    }
    return electionModule(validateElectionName(name), isGlobal, providers, [
      { provide: getElectionGivenOptionsToken(name), useValue: electionOptions },
    ]);
  }

  /**
   * Adds a named election whose options come from a provider: `{ name, imports, inject,
   * useFactory }`, `{ name, useClass }` or `{ name, useExisting }` (an
   * `ElectionOptionsFactory`). The name is static: it names the election's providers. So are
   * `shards` (with `drainTimeoutSeconds`, `shardStore`): with `shards`, the election is sharded,
   * as with {@link LeaderModule.registerElection}; the factory gives the rest.
   * @throws InvalidLeaderElectionOptionError as {@link LeaderModule.registerElection}.
   * @throws LeaderModuleUsageError without `useFactory`, `useClass` or `useExisting`.
   */
  static registerElectionAsync(options: RegisterElectionAsyncOptions): DynamicModule {
    const name = validateElectionName(options.name);
    const token = getElectionGivenOptionsToken(name);
    const given: Provider[] = [];
    if (options.useFactory) {
      given.push({ provide: token, useFactory: options.useFactory, inject: options.inject ?? [] });
    } else {
      const factoryClass = options.useClass ?? options.useExisting;
      if (!factoryClass) {
        throw new LeaderModuleUsageError(nestMessages.asyncOptionsFactoryMissing(name));
      }
      if (options.useClass) given.push(options.useClass);
      given.push({
        provide: token,
        inject: [factoryClass],
        useFactory: (factory: ElectionOptionsFactory) => factory.createElectionOptions(name),
      });
    }
    const { shards, drainTimeoutSeconds, shardStore } = options;
    const module =
      shards !== undefined
        ? shardedElectionModule(
            name,
            options.isGlobal,
            options.providers,
            { shards, drainTimeoutSeconds, shardStore },
            given,
          )
        : electionModule(name, options.isGlobal, options.providers, given);
    return { ...module, imports: [...(options.imports ?? []), ...(module.imports ?? [])] };
  }
}

/**
 * `forRoot()`'s module plus the default election, whose options `given` provides; user
 * providers last, so they replace ours.
 */
function withDefaultElection(
  definition: DynamicModule,
  userProviders: Provider[] = [],
  given: { useValue: ElectionOptions } | { useExisting: typeof LEADER_MODULE_OPTIONS },
): DynamicModule {
  return {
    ...definition,
    imports: [...(definition.imports ?? []), LeaderCoreModule],
    providers: [
      ...(definition.providers ?? []),
      { provide: getElectionGivenOptionsToken(DEFAULT_ELECTION_NAME), ...given },
      ...createElectionProviders(DEFAULT_ELECTION_NAME),
      ...userProviders,
    ],
    exports: [
      ...(definition.exports ?? []),
      LEADER_MODULE_OPTIONS,
      ...electionExports(DEFAULT_ELECTION_NAME),
    ],
  };
}

function shardedElectionModule(
  name: string,
  isGlobal = true,
  userProviders: Provider[] = [],
  sharded: ShardedElectionModuleOptions,
  given: Provider[],
): DynamicModule {
  return {
    module: LeaderModule,
    global: isGlobal,
    imports: [LeaderCoreModule],
    providers: [...given, ...createShardedElectionProviders(name, sharded), ...userProviders],
    exports: shardedElectionExports(name),
  };
}

function electionModule(
  name: string,
  isGlobal = true,
  userProviders: Provider[] = [],
  given: Provider[],
): DynamicModule {
  return {
    module: LeaderModule,
    global: isGlobal,
    imports: [LeaderCoreModule],
    providers: [...given, ...createElectionProviders(name), ...userProviders],
    exports: electionExports(name),
  };
}
