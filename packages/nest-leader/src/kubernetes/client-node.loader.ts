/**
 * Loads `@kubernetes/client-node` on first use instead of at import time: the package costs
 * over a second and tens of MB to load, which apps electing on a file or memory lock never
 * need. Every other module imports it with `import type` only and gets the runtime values
 * (classes, `ApiException`) from {@link loadClientNode}, which `require`s it through
 * `peer-dependency.loader.ts`.
 */
import type * as ClientNode from '@kubernetes/client-node';
import { LeaderElectionError } from '../errors.js';
import { isEsmRequireFailure } from '../peers/esm-require-failure.js';
import { requirePeerDependency, resolvePeerDependency } from '../peers/peer-dependency.loader.js';
import { clientNodeMessages } from './client-node.messages.js';

/** The `@kubernetes/client-node` module namespace. */
export type ClientNodeModule = typeof ClientNode;

let clientNode: ClientNodeModule | undefined;

/**
 * `@kubernetes/client-node`, loaded synchronously on the first call and cached.
 * @throws LeaderElectionError when the peer dependency is not installed ("Install it"), or when
 *   it is installed but this loader cannot `require()` an ES module (Jest's CommonJS runtime,
 *   Node < 22.12: see {@link clientNodeLoadError}); `cause` is the loader's error.
 */
export function loadClientNode(): ClientNodeModule {
  if (clientNode) return clientNode;
  try {
    clientNode = requirePeerDependency('@kubernetes/client-node') as ClientNodeModule;
  } catch (error) {
    throw clientNodeLoadError(error);
  }
  return clientNode;
}

/**
 * The error {@link loadClientNode} throws for `cause`, what loading `@kubernetes/client-node`
 * threw: an ES module that could not be `require()`d (`isEsmRequireFailure`) is explained as
 * such; anything else reads as a missing package.
 */
export function clientNodeLoadError(cause: unknown): LeaderElectionError {
  const message = isEsmRequireFailure(cause)
    ? clientNodeMessages.esmOnly(cause)
    : clientNodeMessages.missing(cause);
  return new LeaderElectionError(message, { cause });
}

/**
 * The path of the `@kubernetes/client-node` {@link loadClientNode} loads, to load its own
 * dependencies (undici) from there.
 * @throws LeaderElectionError when the peer dependency is not installed.
 */
export function resolveClientNode(): string {
  try {
    return resolvePeerDependency('@kubernetes/client-node');
  } catch (error) {
    throw new LeaderElectionError(clientNodeMessages.missing(error), { cause: error });
  }
}
