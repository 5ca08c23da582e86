import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { LeaderHealthIndicator } from 'nest-leader';

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly leader: LeaderHealthIndicator,
  ) {}

  /** Liveness: down only when the elector is wedged. Followers are alive. */
  @Get('healthz')
  @HealthCheck()
  liveness() {
    return this.health.check([() => this.leader.isHealthy()]);
  }

  /** Readiness for leader-only traffic: 200 on the leader, 503 elsewhere. Mind the rollout trap. */
  @Get('readyz')
  @HealthCheck()
  readiness() {
    return this.health.check([() => this.leader.isLeader()]);
  }
}

@Module({
  // A follower's /readyz fails on every probe by design: keep Terminus from logging each one
  // as an error. (Kubernetes still gets the 503.)
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController], // LeaderHealthIndicator comes from LeaderModule: no providers
})
export class HealthModule {}
