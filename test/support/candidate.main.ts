/**
 * One nest-leader candidate as its own OS process (core `LeaderElector`, no Nest), for tests
 * that mix it with other implementations on one lock (test/support/peer-fleet.ts). Prints one
 * JSON line per event on stdout, the same lines as test/python/candidate.py; logs go to
 * stderr. SIGTERM stops the elector (releasing the lock) and exits 0.
 *
 * Usage: node candidate.main.js --lock lease|configmap --name N --namespace NS --identity ID
 *          --lease-duration S --renew-deadline S --retry-period S   (KUBECONFIG in env)
 */
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector, type ResourceLock } from 'nest-leader';
import { makeKubernetesLock } from './kubernetes-locks.js';

const { values } = parseArgs({
  options: {
    lock: { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    identity: { type: 'string' },
    'lease-duration': { type: 'string' },
    'renew-deadline': { type: 'string' },
    'retry-period': { type: 'string' },
  },
});
const identity = values.identity!;

function emit(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ event, identity, kind: 'nest-leader', ...fields })}\n`);
}

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const lock: ResourceLock = makeKubernetesLock(values.lock!, {
  kubeConfig,
  name: values.name!,
  namespace: values.namespace!,
  identity,
});
const log = (level: string) => (message: string) =>
  process.stderr.write(`${new Date().toISOString()} ${level} ${message}\n`);
const elector = new LeaderElector({
  lock,
  identity,
  leaseDurationSeconds: Number(values['lease-duration']),
  renewDeadlineSeconds: Number(values['renew-deadline']),
  retryPeriodSeconds: Number(values['retry-period']),
  logger: { debug: () => undefined, info: log('info'), warn: log('warn'), error: log('error') },
  callbacks: {
    onStartedLeading: (term) =>
      emit('started-leading', { leaseTransitions: term.leaseTransitions }),
    onStoppedLeading: (term) =>
      emit('stopped-leading', { leaseTransitions: term.leaseTransitions }),
  },
});
process.once('SIGTERM', () => {
  elector.stop().then(() => {
    emit('stopped');
    process.exit(0);
  });
});
emit('campaigning');
elector.start();
