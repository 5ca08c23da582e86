import { Module } from '@nestjs/common';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { LeaderModule } from 'nest-leader';

@Module({
  imports: [
    PrometheusModule.register(), // GET /metrics, prom-client's global registry
    LeaderModule.forRoot({
      leaseName: 'billing-worker',
      metrics: true, // leader_election_* in that registry (or { registry })
      kubernetesEvents: true, // Events on the Lease: kubectl describe lease billing-worker
      podRoleLabel: true, // nest-leader/role=leader|standby on this Pod
    }),
    // Named elections inherit the three; set them per election to differ.
    LeaderModule.registerElection({ name: 'reports', leaseName: 'reports', podRoleLabel: false }),
  ],
})
export class AppModule {}
