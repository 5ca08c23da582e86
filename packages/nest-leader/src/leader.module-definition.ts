import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LeaderModuleOptions } from './leader-module-options.interface.js';

/** Extra options of `forRoot`/`forRootAsync` that shape the module rather than the election. */
export interface LeaderModuleExtras {
  /**
   * Register the module globally, so `LeaderElectionService` can be injected everywhere.
   * Default true: an application has one elector, like it has one scheduler.
   */
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: LEADER_MODULE_OPTIONS,
  OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LeaderModuleOptions>({ moduleName: 'Leader' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createLeaderOptions')
  .setExtras<LeaderModuleExtras>({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
