import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ElectionDirectory } from './elections/election.directory.js';
import { ElectionsLifecycle } from './elections/elections.lifecycle.js';
import { LeaderExplorer } from './leader.explorer.js';

/**
 * What an application has once, however many elections it registers: the directory of its
 * elections, the explorer of decorated methods, and the lifecycle that starts and stops every
 * election. Imported by every `LeaderModule.forRoot()`/`registerElection()` module (Nest
 * creates it once per application); global so the health indicator finds the directory.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [ElectionDirectory, LeaderExplorer, ElectionsLifecycle],
  exports: [ElectionDirectory],
})
export class LeaderCoreModule {}
