import { Injectable, Module } from '@nestjs/common';
import { Cron, CronExpression, ScheduleModule } from '@nestjs/schedule';
import { LeaderModule, LeaderOnly } from 'nest-leader';

@Injectable()
export class InvoiceJobs {
  @LeaderOnly() // runs on exactly one replica: the one holding the Lease
  @Cron(CronExpression.EVERY_MINUTE)
  async closeInvoices(): Promise<void> {
    // ...
  }
}

@Module({
  imports: [ScheduleModule.forRoot(), LeaderModule.forRoot({ leaseName: 'billing-worker' })],
  providers: [InvoiceJobs],
})
export class AppModule {}
