/**
 * One sample of the `rss` benchmark, in a fresh process: `node rss-child.js <scenario>` starts
 * a Nest application context (bare, or with `LeaderModule` and the given lock), waits until it
 * leads (with a lock), lets it settle, collects garbage and prints `{ rssBytes, heapUsedBytes }`
 * as JSON on stdout.
 */
import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const scenario = process.argv[2];

@Module({})
class BareModule {}

async function moduleFor(name: string | undefined): Promise<DynamicModule | typeof BareModule> {
  if (name === 'bare') return BareModule;
  if (name !== 'memory' && name !== 'file') throw new Error(`unknown rss scenario "${name}"`);
  const { LeaderModule } = await import('nest-leader');
  return {
    module: BareModule,
    imports: [LeaderModule.forRoot({ leaseName: `bench-rss-${process.pid}`, lock: name })],
  };
}

const app = await NestFactory.createApplicationContext(await moduleFor(scenario), {
  logger: ['error'],
});
if (scenario !== 'bare') {
  const { LeaderElectionService } = await import('nest-leader');
  await app.get(LeaderElectionService).waitForLeadership({ signal: AbortSignal.timeout(10_000) });
}
// Let start-up work (timers, first renewals) finish, then measure after a full GC.
await new Promise((resolve) => setTimeout(resolve, 500));
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('rss-child needs --expose-gc');
gc();
const { rss, heapUsed } = process.memoryUsage();
process.stdout.write(`${JSON.stringify({ rssBytes: rss, heapUsedBytes: heapUsed })}\n`);
await app.close();
