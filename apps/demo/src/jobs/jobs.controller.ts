import { Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { LeaderOnly } from 'nest-leader';
import { type DispatchResult, JobDispatcher } from './job-dispatcher.service.js';

/**
 * Leader-only HTTP: on a follower, POST /jobs/dispatch answers 503 with `Retry-After` and the
 * leader's identity. Behind the Service only the leader is Ready, so requests land there.
 */
@Controller('jobs')
export class JobsController {
  constructor(private readonly dispatcher: JobDispatcher) {}

  @Post('dispatch')
  @HttpCode(HttpStatus.ACCEPTED)
  @LeaderOnly()
  dispatchNow(): Promise<DispatchResult> {
    return this.dispatcher.dispatch('dispatch-jobs-http');
  }
}
