import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LeaderModule } from 'nest-leader';

// The pod runs nest-leader-elector --http=:4040 --ttl=10s (renew deadline 5 s) next to this app:
// the app follows it instead of campaigning. renewDeadline + retryPeriod stays below ttl/2.
@Module({
  imports: [
    ScheduleModule.forRoot(),
    LeaderModule.forRoot({
      leaseName: 'billing-worker', // informational here: the sidecar's --election names the Lease
      identity: process.env.POD_NAME, // the sidecar's --id
      lock: { sidecar: 'http://localhost:4040' },
      leaseDurationSeconds: 4,
      renewDeadlineSeconds: 2,
      retryPeriodSeconds: 1,
    }),
  ],
})
export class AppModule {}
