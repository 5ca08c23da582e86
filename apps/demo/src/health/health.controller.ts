import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { LeaderHealthIndicator } from 'nest-leader';

/**
 * Probes. Liveness and readiness mean different things here:
 * - GET /healthz (liveness): the default election's elector is running and not wedged. 200 on every
 *   healthy replica, leader or not: restarting a follower for being a follower would be wrong.
 * - GET /readyz (readiness): this replica leads the default election (the sharded election is
 *   not part of it). 200 on the leader only, 503 elsewhere, so a Service routes to the leader. Read deploy/deployment.yaml before copying this: leader-only
 *   readiness constrains rollouts and PodDisruptionBudgets.
 */
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly leader: LeaderHealthIndicator,
  ) {}

  @Get('healthz')
  @HealthCheck()
  liveness() {
    return this.health.check([() => this.leader.isHealthy('leader-election')]);
  }

  @Get('readyz')
  @HealthCheck()
  readiness() {
    return this.health.check([() => this.leader.isLeader()]);
  }
}
