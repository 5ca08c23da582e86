/**
 * A candidate process for the FileLock multi-process test:
 * `node test/dist/support/file-candidate.js <lease-file> <identity>`.
 * Prints one JSON line per leadership change: {"event":"started"|"stopped","identity","leaseTransitions"}.
 */
import { FileLock, LeaderElector, type LeaderTerm } from 'nest-leader';

const [path, identity] = process.argv.slice(2);
const emit = (event: string, term: LeaderTerm): void =>
  void process.stdout.write(
    `${JSON.stringify({ event, identity, leaseTransitions: term.leaseTransitions })}\n`,
  );

const elector = new LeaderElector({
  lock: new FileLock({ path: path! }),
  identity: identity!,
  leaseDurationSeconds: 2,
  renewDeadlineSeconds: 1.5,
  retryPeriodSeconds: 0.5,
  logger: { debug() {}, info() {}, warn() {}, error: (m) => void process.stderr.write(`${m}\n`) },
  callbacks: {
    onStartedLeading: (term) => emit('started', term),
    onStoppedLeading: (term) => emit('stopped', term),
  },
});
elector.start();
