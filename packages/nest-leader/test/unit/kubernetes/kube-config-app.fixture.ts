/**
 * A Nest application on the `'kubernetes'` lock, for the credentials test:
 * `KUBECONFIG=<file> node kube-config-app.fixture.js`. It bootstraps with Nest's default
 * logger and lets a failure surface as Node prints it (message, stack and causes).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LeaderModule } from 'nest-leader';

@Module({
  imports: [LeaderModule.forRoot({ leaseName: 'credentials', lock: 'kubernetes' })],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule);
await app.init();
await app.close();
