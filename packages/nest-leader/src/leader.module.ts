import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { InFlightRegistry } from './in-flight.registry.js';
import { LeaderElectionService } from './leader-election.service.js';
import { LeaderExplorer } from './leader.explorer.js';
import {
  ASYNC_OPTIONS_TYPE,
  ConfigurableModuleClass,
  OPTIONS_TYPE,
} from './leader.module-definition.js';
import { LeaderOnlyGate } from './leader-only.gate.js';
import { LeadershipEventsDispatcher } from './leadership-events.dispatcher.js';

/**
 * Kubernetes Lease leader election for a Nest application: one elector per application,
 * `@LeaderOnly()` gating, leadership events, and the `LeaderElectionService`. Import it once,
 * in the root module; it is global unless `isGlobal: false`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    LeaderElectionService,
    LeaderOnlyGate,
    InFlightRegistry,
    LeadershipEventsDispatcher,
    LeaderExplorer,
  ],
  exports: [LeaderElectionService],
})
export class LeaderModule extends ConfigurableModuleClass {
  /**
   * Configures the election with static options.
   * @throws InvalidLeaderElectionOptionError (when the application is created) naming the
   *   invalid option and its rule.
   * @example `LeaderModule.forRoot({ leaseName: 'billing-worker' })`
   */
  static override forRoot(options: typeof OPTIONS_TYPE): DynamicModule {
    return super.forRoot(options);
  }

  /**
   * Configures the election with options built by a provider: `{ imports, inject, useFactory }`,
   * `{ useClass }` or `{ useExisting }` (a `LeaderModuleOptionsFactory`).
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
    return super.forRootAsync(options);
  }
}
