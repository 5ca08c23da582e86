/**
 * A Nest application that follows the `nest-leader-elector` sidecar of its pod
 * (`lock: { sidecar: url }`) and runs one `@LeaderOnly()` `@Interval` job, printing a JSON line
 * per run with the term's fencing token. Closed (app.close()) on SIGTERM.
 *
 * Usage: node sidecar-follower-app.main.js --identity ID --sidecar URL
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { currentTerm, LeaderModule, LeaderOnly } from 'nest-leader';

const { values } = parseArgs({
  options: { identity: { type: 'string' }, sidecar: { type: 'string' } },
});
const identity = values.identity!;
const emit = (event: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ event, identity, ...fields })}\n`);

/** Timings for a sidecar with --ttl=6s (renew deadline 3 s): renewDeadline + retryPeriod < 3 s. */
const FOLLOWER_TIMINGS = {
  leaseDurationSeconds: 2,
  renewDeadlineSeconds: 1,
  retryPeriodSeconds: 0.5,
} as const;

@Injectable()
class Jobs {
  @LeaderOnly()
  @Interval(100)
  work(): void {
    emit('leader-work', { token: currentTerm()!.leaseTransitions });
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LeaderModule.forRoot({
      leaseName: 'follows-sidecar',
      identity,
      lock: { sidecar: values.sidecar! },
      ...FOLLOWER_TIMINGS,
    }),
  ],
  providers: [Jobs],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
await app.init();
emit('started');
process.once('SIGTERM', () => {
  app.close().then(() => process.exit(0));
});
