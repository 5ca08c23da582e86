import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  // SIGTERM → beforeApplicationShutdown: drain leader-only work, then release the Lease.
  app.enableShutdownHooks();
  await app.listen(3000);
}

void bootstrap();
