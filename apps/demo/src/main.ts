/**
 * The demo replica's entry: `node dist/main.js` (replica.ts is the replica).
 *
 * Node as a container's PID 1 ignores SIGTERM it has no handler for, and loading the app takes
 * a second or more: a pod told to stop while it boots (a rollout that moves on) would go on to
 * campaign — and could be handed the Lease — until SIGKILL at the end of its grace period. So
 * this entry handles SIGTERM and SIGINT before anything else is loaded, by exiting at once
 * (nothing has started), until Nest's shutdown hooks take over.
 */
const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
const exitWhileBooting = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
for (const signal of SIGNALS) process.once(signal, exitWhileBooting);

const { startReplica } = await import('./replica.js');
startReplica(() => {
  for (const signal of SIGNALS) process.off(signal, exitWhileBooting);
});
