import type { Logger } from '@nestjs/common';
import { readPodCreationTimestamp } from '../../kubernetes/pod-creation-timestamp.reader.js';
import { isDnsSubdomain } from '../../kubernetes/names.js';
import { LeaseLock } from '../../locks/kubernetes-object/lease.lock.js';
import type { ResourceLock } from '../../locks/resource-lock.js';
import { nestMessages } from '../nest.messages.js';
import type { ResolvedElectionOptions } from './elections.interfaces.js';

/**
 * The `podCreationTimestamp` an election's elector is built with: the one given, else — when
 * the candidate would advertise a pod template (`podTemplateHash`, or `POD_TEMPLATE_HASH`) on
 * a Lease and `POD_NAME`/`POD_NAMESPACE` name its pod — the pod's, read once from the API
 * server. Never throws: a failed read is one warning (what failed and what to fix) and the
 * template is dated by the candidates' starts, as without this option.
 * @param env - environment to read; default `process.env`
 */
export async function lookUpPodCreationTimestamp(
  options: ResolvedElectionOptions,
  lock: ResourceLock,
  logger: Pick<Logger, 'warn'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Date | undefined> {
  if (options.podCreationTimestamp !== undefined) return options.podCreationTimestamp;
  const advertisesTemplate =
    (options.podTemplateHash ?? (env.POD_TEMPLATE_HASH || undefined)) !== undefined;
  if (!advertisesTemplate || !(lock instanceof LeaseLock)) return undefined;
  const podName = env.POD_NAME?.trim();
  const namespace = env.POD_NAMESPACE?.trim();
  if (!isDnsSubdomain(podName) || !namespace) {
    logger.warn(nestMessages.podCreationUnknown(options.name, podName, namespace));
    return undefined;
  }
  try {
    return await readPodCreationTimestamp({ kubeConfig: lock.kubeConfig, podName, namespace });
  } catch (error) {
    logger.warn(nestMessages.podCreationReadFailed(options.name, error));
    return undefined;
  }
}
