/**
 * A leader process for the pause test: `node paused-worker.js <kubeconfig> <namespace>
 * <lease> <identity> <check>`. Campaigns on the Lease with FAST_TIMINGS; while it leads, does
 * one unit of work every 100 ms, each after checking its term with `<check>`: `isLive` (the
 * README's `term.isLive()`) or `signal` (`term.signal.aborted`). Prints one JSON line per
 * event: `{"event":"started"|"unit"|"refused"|"stopped","leaseTransitions","unit"?}`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector, LeaseLock, type LeaderTerm } from 'nest-leader';
import { FAST_TIMINGS } from './candidates.js';

const [kubeconfigPath, namespace, leaseName, identity, check] = process.argv.slice(2);
const emit = (event: string, term: LeaderTerm, extra: Record<string, unknown> = {}): void =>
  void process.stdout.write(
    `${JSON.stringify({ event, leaseTransitions: term.leaseTransitions, ...extra })}\n`,
  );

const live = (term: LeaderTerm): boolean =>
  check === 'signal' ? !term.signal.aborted : term.isLive();

async function work(term: LeaderTerm): Promise<void> {
  for (let unit = 1; ; unit++) {
    if (!live(term)) return emit('refused', term, { unit });
    emit('unit', term, { unit });
    await sleep(100); // between two units of work: where the test stops the process
  }
}

const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfigPath!);
const elector = new LeaderElector({
  lock: new LeaseLock({ kubeConfig, name: leaseName!, namespace: namespace!, identity }),
  identity: identity!,
  ...FAST_TIMINGS,
  releaseOnStop: false,
  logger: { debug() {}, info() {}, warn() {}, error: (m) => void process.stderr.write(`${m}\n`) },
  callbacks: {
    onStartedLeading: (term) => {
      emit('started', term);
      void work(term);
    },
    onStoppedLeading: (term) => emit('stopped', term),
  },
});
elector.start();
process.on('SIGTERM', () => process.exit(0));
