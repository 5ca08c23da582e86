/**
 * One HTTP/1.1 keep-alive connection pool per `KubeConfig` for every request nest-leader makes
 * (lock reads and writes, watches, Events, pod labels).
 *
 * Left alone, `@kubernetes/client-node` 2.x builds a new undici `Agent` for every request: a
 * TCP + TLS handshake per renewal (two round trips where one would do, see the latency
 * condition in the package's docs/elections.md), and, because undici 8 offers `h2` by ALPN and kube-apiserver picks it, a
 * new HTTP/2 session per request. Node's HTTP/2 client can then spin in a native immediate
 * after a long event-loop block (`Http2Session::SendPendingData` growing its outgoing buffer
 * until the process dies of `std::bad_alloc`; found by the chaos harness, see the README). So
 * the library's requests go over one pooled `Agent` with `allowH2: false`, as client-go's own
 * transport reuses connections, with the same TLS material client-node would have used.
 *
 * Only the dispatcher changes: headers, credentials (tokens, exec plugins) and TLS settings
 * stay client-node's, read on every request as before. A kubeconfig whose TLS material changes
 * (a rotated client certificate, another current context) gets a new pool, and the old one
 * closes once its requests end. Clusters reached through `proxy-url` keep client-node's own
 * per-request proxy agents.
 */
import { createRequire } from 'node:module';
import type { KubeConfig } from '@kubernetes/client-node';
import { resolveClientNode } from './client-node.loader.js';

/** What undici's dispatchers offer that this file uses. */
interface Dispatcher {
  close(): Promise<void>;
}

/** The TLS options client-node passes to undici's connector (`createDispatcherOptions`). */
type ConnectOptions = Record<string, unknown>;

/** The client-node 2.x internals this file replaces or calls (present in 2.0.0 and 2.0.1). */
interface ClientNodeDispatching {
  createDispatcher(cluster: unknown, agentOptions: unknown): Dispatcher | undefined;
  createDispatcherOptions(
    cluster: unknown,
    agentOptions: unknown,
  ): { type: 'agent'; connect: ConnectOptions } | { type: 'none' | 'proxy' | 'socks' };
}

/** undici's `Agent` constructor, with the options used here. */
type AgentConstructor = new (options: { allowH2: boolean; connect: ConnectOptions }) => Dispatcher;

/** The same keep-alive settings client-node gives its agents (as client-go's dialer). */
const KEEP_ALIVE = { keepAlive: true, keepAliveInitialDelay: 30_000 };

const shared = new WeakMap<KubeConfig, KubeConfig>();
let Agent: AgentConstructor | undefined;

/**
 * `kubeConfig` as a `KubeConfig` whose API clients and watches share one HTTP/1.1 keep-alive
 * connection pool; the same object for the same `kubeConfig`, so every lock and observer on it
 * shares the pool. The argument is not changed: the result delegates everything else to it
 * (a later `setCurrentContext` on it is seen too).
 *
 * A `KubeConfig` without client-node 2.x's `createDispatcherOptions` (another major version)
 * is returned as is.
 * @param kubeConfig - a loaded client-node `KubeConfig`
 */
export function withSharedConnection(kubeConfig: KubeConfig): KubeConfig {
  const cached = shared.get(kubeConfig);
  if (cached) return cached;
  const original = kubeConfig as unknown as Partial<ClientNodeDispatching>;
  if (
    typeof original.createDispatcher !== 'function' ||
    typeof original.createDispatcherOptions !== 'function'
  ) {
    return kubeConfig;
  }
  const createDispatcher = original.createDispatcher;
  let pool: { connect: ConnectOptions; dispatcher: Dispatcher } | undefined;
  const wrapper = Object.create(kubeConfig) as ClientNodeDispatching;
  // client-node's applySecurityAuthentication calls this.createDispatcher on every request.
  wrapper.createDispatcher = function (cluster, agentOptions) {
    const options = this.createDispatcherOptions(cluster, agentOptions);
    if (options.type === 'proxy' || options.type === 'socks') {
      return createDispatcher.call(this, cluster, agentOptions);
    }
    const connect = options.type === 'agent' ? options.connect : KEEP_ALIVE;
    if (!pool || !sameConnectOptions(pool.connect, connect)) {
      void pool?.dispatcher.close().catch(() => undefined);
      pool = { connect, dispatcher: new (loadUndiciAgent())({ allowH2: false, connect }) };
    }
    return pool.dispatcher;
  };
  shared.set(kubeConfig, wrapper as unknown as KubeConfig);
  return wrapper as unknown as KubeConfig;
}

/** True when both hold the same TLS material and settings (Buffers compared by content). */
function sameConnectOptions(a: ConnectOptions, b: ConnectOptions): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (Buffer.isBuffer(x) && Buffer.isBuffer(y) ? !x.equals(y) : x !== y) return false;
  }
  return true;
}

/** undici's `Agent` from the copy client-node depends on (its `fetch` takes that copy's agents). */
function loadUndiciAgent(): AgentConstructor {
  Agent ??= (createRequire(resolveClientNode())('undici') as { Agent: AgentConstructor }).Agent;
  return Agent;
}
