/**
 * A candidate process for the FileLock multi-process tests:
 * `node test/dist/support/file-candidate.js <lease-file> <identity> [lease renew retry]`
 * (seconds; default 2 1.5 0.5). Prints one JSON line per event, stamped with CLOCK_MONOTONIC
 * ({@link monotonicNowMs}): `{"event":"started"|"stopped","identity","leaseTransitions",
 * "monotonicMs"}` per leadership change, `{"event":"log","level","message",…}` per log line of the
 * elector (debug excluded), `{"event":"exit",…}` before exiting. SIGTERM stops the elector
 * (releasing the lock) and exits 0.
 */
import { FileLock, LeaderElector, type LeaderTerm } from 'nest-leader';
import { monotonicNowMs } from './monotonic-time.js';

const [path, identity, lease = '2', renew = '1.5', retry = '0.5'] = process.argv.slice(2);
const emit = (event: string, fields: Record<string, unknown> = {}): void =>
  void process.stdout.write(
    `${JSON.stringify({ event, identity, ...fields, monotonicMs: monotonicNowMs() })}\n`,
  );
const term = (event: string) => (value: LeaderTerm) =>
  emit(event, { leaseTransitions: value.leaseTransitions });
const log = (level: string) => (message: string) => emit('log', { level, message });

const elector = new LeaderElector({
  lock: new FileLock({ path: path! }),
  identity: identity!,
  leaseDurationSeconds: Number(lease),
  renewDeadlineSeconds: Number(renew),
  retryPeriodSeconds: Number(retry),
  logger: { debug() {}, info: log('info'), warn: log('warn'), error: log('error') },
  callbacks: { onStartedLeading: term('started'), onStoppedLeading: term('stopped') },
});
process.once('SIGTERM', () => {
  void elector.stop().then(() => {
    emit('exit', { reason: 'SIGTERM' });
    process.exit(0);
  });
});
elector.start();
