/**
 * Loads `@kubernetes/client-node` on first use instead of at import time: the package costs
 * over a second and tens of MB to load, which apps electing on a file or memory lock never
 * need. Every other module imports it with `import type` only and gets the runtime values
 * (classes, `ApiException`) from {@link loadClientNode}.
 *
 * This is the only file that uses `import.meta` (for `createRequire`); a CommonJS build
 * replaces it with one that calls `require` directly. Node ≥ 22.12 can `require()` the
 * ESM-only client-node 2.x, and gets the same module instance an `import` gets.
 */
import { createRequire } from 'node:module';
import type * as ClientNode from '@kubernetes/client-node';
import { LeaderElectionError } from '../errors.js';
import { lockMessages } from '../messages.js';

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
    clientNode = createRequire(import.meta.url)('@kubernetes/client-node') as ClientNodeModule;
  } catch (error) {
    throw new LeaderElectionError(lockMessages.clientNodeMissing(error), { cause: error });
  }
  return clientNode;
}
