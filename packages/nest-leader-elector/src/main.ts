#!/usr/bin/env node
/**
 * `nest-leader-elector`: the leader-election sidecar's command line. Exit codes: 0 after a
 * clean stop (SIGTERM/SIGINT: the Lease is released), 2 for bad flags or a missing or unusable Kubernetes configuration, 1 when
 * it could not start (e.g. the HTTP address is taken).
 */
import { InvalidLeaderElectionOptionError, KubeConfigError } from 'nest-leader/core';
import { sidecarMessages } from './sidecar.messages.js';
import { LeaderElectorSidecar } from './leader-elector.sidecar.js';
import { parseSidecarArgs } from './sidecar-options.js';

async function main(): Promise<number | undefined> {
  const options = parseSidecarArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(`${sidecarMessages.usage()}\n`);
    return 0;
  }
  const sidecar = new LeaderElectorSidecar(options);
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1); // a second signal: give up on the release
    stopping = true;
    process.stderr.write(`${new Date().toISOString()} INFO ${sidecarMessages.stopping(signal)}\n`);
    sidecar.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await sidecar.start();
  return undefined;
}

main().then(
  (code) => {
    if (code !== undefined) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(
      error instanceof InvalidLeaderElectionOptionError || error instanceof KubeConfigError ? 2 : 1,
    );
  },
);
