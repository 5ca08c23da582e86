/**
 * A Nest application on a FileLock, for the signal test:
 * `node file-lock-app.fixture.js <lease-file>`. Prints `LEADING` once it leads; shutdown hooks
 * are enabled as the README tells users to.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LeaderElectionService, LeaderModule } from 'nest-leader';
import { FileLock } from 'nest-leader/core';

const [path] = process.argv.slice(2);

@Module({
  imports: [LeaderModule.forRoot({ leaseName: 'signals', lock: new FileLock({ path: path! }) })],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
app.enableShutdownHooks();
await app.init();
await app.get(LeaderElectionService).waitForLeadership();
process.stdout.write('LEADING\n');
