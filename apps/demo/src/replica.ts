/**
 * The demo replica, loaded by main.ts: configured from the environment (demo.config.ts); stdout
 * carries the demo's JSON events, stderr Nest's JSON logs.
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InvalidLeaderElectionOptionError } from 'nest-leader';
import { AppModule } from './app.module.js';
import { type DemoConfig, DemoConfigError, loadDemoConfig } from './demo.config.js';
import { SHARDED_ELECTION } from './demo.constants.js';
import { EventLog } from './event-log.service.js';
import { orderSharding } from './jobs/order-sharding.js';
import { StderrJsonLogger } from './json-logger.js';
import { ShutdownEventsListener } from './shutdown-events.listener.js';

async function bootstrap(config: DemoConfig, hooksInstalled: () => void): Promise<void> {
  const sharding = orderSharding(config);
  const app = await NestFactory.create(AppModule.forRoot(config, sharding), {
    logger: new StderrJsonLogger(),
    // Let bootstrap errors reach the handler below (a clear message, exit 78 for bad options)
    // instead of Nest exiting with 1 on its own.
    abortOnError: false,
    // Close keep-alive connections on shutdown: a client polling every second (the chaos
    // harness's probes, a load balancer) would otherwise hold server.close() — and the exit —
    // open forever, after the Lease was released and leader-only work drained.
    forceCloseConnections: true,
  });
  // SIGTERM (Kubernetes) and SIGINT (Ctrl-C) run Nest's shutdown hooks: the library drains
  // in-flight @LeaderOnly work and releases the Lease before the process exits. Exit status 0
  // then means "shut down completely"; dying by the signal itself (143/130) means it did not.
  app.get(ShutdownEventsListener).watchSignals();
  app.enableShutdownHooks([...ShutdownEventsListener.signals], { useProcessExit: true });
  hooksInstalled();
  await app.listen(config.port);
  const { port } = app.getHttpServer().address() as AddressInfo;
  if (!sharding.enabled) {
    new Logger('Demo').warn(`sharded election ${SHARDED_ELECTION} is off: ${sharding.reason}`);
  }
  app.get(EventLog).started(port, sharding);
}

/**
 * Starts the replica; `hooksInstalled` is called once Nest's shutdown hooks handle SIGTERM and
 * SIGINT. Exits the process with a clear message on bad configuration or a failed start.
 */
export function startReplica(hooksInstalled: () => void): void {
  let config: DemoConfig;
  try {
    config = loadDemoConfig();
  } catch (error) {
    if (!(error instanceof DemoConfigError)) throw error;
    process.stderr.write(`nest-leader demo: ${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  bootstrap(config, hooksInstalled).catch((error: unknown) => {
    if (error instanceof InvalidLeaderElectionOptionError) {
      // A timing or option the library rejects (e.g. RENEW_DEADLINE_SECONDS ≥ LEASE_DURATION_SECONDS).
      process.stderr.write(`nest-leader demo: invalid configuration: ${error.message}\n`);
      process.exit(78);
    }
    if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
      process.stderr.write(`nest-leader demo: port ${config.port} is already in use (PORT)\n`);
      process.exit(1);
    }
    process.stderr.write(
      `nest-leader demo: failed to start: ${(error as Error)?.stack ?? String(error)}\n`,
    );
    process.exit(1);
  });
}
