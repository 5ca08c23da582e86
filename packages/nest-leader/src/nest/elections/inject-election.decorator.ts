import { Inject } from '@nestjs/common';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';
import { getLeaderElectionToken } from './election.tokens.js';

/**
 * Injects the `LeaderElectionService` of an election, as @nestjs/typeorm's
 * `@InjectDataSource(name)`: `constructor(@InjectElection('shard-a') shardA: LeaderElectionService)`.
 * @param name - default `'default'`, the election of `LeaderModule.forRoot()`
 */
export function InjectElection(
  name: string = DEFAULT_ELECTION_NAME,
): ParameterDecorator & PropertyDecorator {
  return Inject(getLeaderElectionToken(name));
}
