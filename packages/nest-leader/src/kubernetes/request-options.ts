/**
 * Options for one client-node request: the caller's signal bounded by a timeout, and whether the
 * request got past applying the kubeconfig (see `KubernetesRequest.sent`); the `requestTimeoutMs`
 * rule. Shared by the locks and the observers that write Events and pod labels.
 */
import type { ConfigurationOptions } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from '../errors.js';
import { loadClientNode } from './client-node.loader.js';
import { kubernetesOptionRules } from './kubernetes.messages.js';

/** One request's options and what became of it. */
export interface KubernetesRequestOptions {
  /** Pass as the last argument of a client-node API call. */
  options: ConfigurationOptions;
  /**
   * True once client-node applied the kubeconfig's credentials and TLS settings (it does so
   * before the middleware runs): a failure after that was not a configuration problem.
   */
  sent: () => boolean;
}

/**
 * Options that pass `signal`, bounded by `timeoutMs`, to the HTTP request.
 * @param timeoutMs - upper bound of the request in ms
 * @param signal - the caller's signal, if any
 */
export function kubernetesRequestOptions(
  timeoutMs: number,
  signal?: AbortSignal,
): KubernetesRequestOptions {
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const { Observable } = loadClientNode();
  let sent = false;
  const options: ConfigurationOptions = {
    middleware: [
      {
        pre: (context) => {
          sent = true;
          context.setSignal(combined);
          return new Observable(Promise.resolve(context));
        },
        post: (response) => new Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
  return { options, sent: () => sent };
}

/**
 * `requestTimeoutMs` with its default applied.
 * @throws InvalidLeaderElectionOptionError unless it is a positive finite number.
 */
export function validateRequestTimeoutMs(value: number | undefined, defaultMs: number): number {
  const timeoutMs = value ?? defaultMs;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new InvalidLeaderElectionOptionError(
      'requestTimeoutMs',
      kubernetesOptionRules.requestTimeoutMs,
      timeoutMs,
    );
  }
  return timeoutMs;
}
