/**
 * Loads `@kubernetes/client-node` on first use instead of at import time: the package costs
 * over a second and tens of MB to load, which apps electing on a file or memory lock never
 * need. Every other module imports it with `import type` only and gets the runtime values
 * (classes, `ApiException`) from {@link loadClientNode}, which `require`s it through
 * `peer-dependency.loader.ts`.
 */
import type * as ClientNode from '@kubernetes/client-node';
import { LeaderElectionError } from '../errors.js';
import { lockMessages } from '../messages.js';
import { requirePeerDependency, resolvePeerDependency } from '../peers/peer-dependency.loader.js';

/** The `@kubernetes/client-node` module namespace. */
export type ClientNodeModule = typeof ClientNode;

let clientNode: ClientNodeModule | undefined;

/**
 * `@kubernetes/client-node`, loaded synchronously on the first call and cached.
 * @throws LeaderElectionError when the peer dependency is not installed.
 */
export function loadClientNode(): ClientNodeModule {
  if (clientNode) return clientNode;
  try {
    clientNode = requirePeerDependency('@kubernetes/client-node') as ClientNodeModule;
  } catch (error) {
    throw new LeaderElectionError(lockMessages.clientNodeMissing(error), { cause: error });
  }
  return clientNode;
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
    throw new LeaderElectionError(lockMessages.clientNodeMissing(error), { cause: error });
  }
}
