import { KubeConfig } from '@kubernetes/client-node';
import {
  LeaderElector,
  LeaseCandidateRegistration,
  LeaseLock,
  resolveIdentity,
} from 'nest-leader/core';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const identity = resolveIdentity();
const [namespace, leaseName] = ['billing', 'billing-worker'];

// Kubernetes' election controller picks the holder; this candidate only follows the Lease.
export const elector = new LeaderElector({
  lock: new LeaseLock({ kubeConfig, name: leaseName, namespace, identity }),
  identity,
  coordinated: new LeaseCandidateRegistration({
    kubeConfig,
    namespace,
    leaseName,
    identity,
    binaryVersion: '1.4.2', // strict semantic versions
    emulationVersion: '1.4.0', // default: binaryVersion
  }),
});
