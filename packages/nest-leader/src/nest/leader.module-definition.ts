import { ConfigurableModuleBuilder, type Provider } from '@nestjs/common';
import type { LeaderModuleOptions } from './leader-module-options.interfaces.js';

/** Extra options of `forRoot`/`forRootAsync` that shape the module rather than the election. */
export interface LeaderModuleExtras {
  /**
   * Register the module globally, so `LeaderElectionService` (and `forRoot()`'s options, the
   * defaults of named elections) can be injected everywhere. Default true: an application has
   * one default election, like it has one scheduler.
   */
  isGlobal?: boolean;
  /**
   * Providers added to the module after the default election's own, so they replace them: a
   * `ResourceLock` under `getElectionLockToken()`, an `ElectionObserver` under
   * `getElectionObserverToken()`, or the whole elector under `getLeaderElectorToken()`.
   */
  providers?: Provider[];
}

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: LEADER_MODULE_OPTIONS,
  OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LeaderModuleOptions>({ moduleName: 'Leader' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createLeaderOptions')
  .setExtras<LeaderModuleExtras>({ isGlobal: true, providers: [] }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
