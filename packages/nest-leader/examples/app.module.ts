import { Injectable, Module } from '@nestjs/common';
import { Cron, CronExpression, ScheduleModule } from '@nestjs/schedule';
import { LeaderModule, LeaderOnly } from 'nest-leader';
import { HealthModule } from './health.module.js';

@Injectable()
export class InvoiceJobs {
  closed = 0; // runs so far (the e2e test below reads it)

  @LeaderOnly() // runs on exactly one replica: the one holding the Lease
  @Cron(CronExpression.EVERY_MINUTE)
  async closeInvoices(): Promise<void> {
    // ... close this minute's invoices
    this.closed += 1;
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LeaderModule.forRoot({ leaseName: 'billing-worker' }),
    HealthModule, // /healthz and /readyz: see "Health checks" below
  ],
  providers: [InvoiceJobs],
})
export class AppModule {}
