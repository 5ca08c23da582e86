import { Module } from '@nestjs/common';
import { LeaderModule } from 'nest-leader';

// Joins a fleet that elects on ConfigMap "billing-worker" (old client-go, Python's
// ConfigMapLock, fabric8). RBAC: get, create, update on configmaps.
@Module({
  imports: [LeaderModule.forRoot({ leaseName: 'billing-worker', lock: 'configmap' })],
})
export class LegacyFleetModule {}
