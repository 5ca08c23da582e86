import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ElectionDirectory } from './elections/election.directory.js';
import { ElectionsLifecycle } from './elections/elections.lifecycle.js';
import { LeaderHealthIndicator } from './health/leader.health.js';
import { LeaderExplorer } from './leader.explorer.js';
import { LeaderSetupChecker } from './leader-setup.checker.js';

/**
 * What an application has once, however many elections it registers: the directory of its
 * elections, the explorer of decorated methods, and the lifecycle that starts and stops every
 * election, the bootstrap warnings about silent mistakes, and the Terminus health indicator.
 * Imported by every `LeaderModule.forRoot()`/`registerElection()` module (Nest creates it once
 * per application); global, so `LeaderHealthIndicator` is injectable anywhere without being
 * listed in `providers`.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [
    ElectionDirectory,
    LeaderExplorer,
    ElectionsLifecycle,
    LeaderSetupChecker,
    LeaderHealthIndicator,
  ],
  exports: [ElectionDirectory, LeaderHealthIndicator],
})
export class LeaderCoreModule {}
