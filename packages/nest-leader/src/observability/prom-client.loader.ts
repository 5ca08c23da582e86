/**
 * Loads the optional peer dependency `prom-client` on first use, so applications that never
 * turn metrics on neither install nor load it. Loaded synchronously (`require`, through
 * `peer-dependency.loader.ts`), so the observer can be built in a constructor.
 */
import { MissingPeerDependencyError } from '../errors.js';
import { requirePeerDependency } from '../peers/peer-dependency.loader.js';

/** The prom-client module. */
export type PromClient = typeof import('prom-client');

/** The range of prom-client this library is written against (package.json peerDependencies). */
export const PROM_CLIENT_RANGE = '^15.0.0';

let loaded: PromClient | undefined;

/**
 * prom-client, resolved from this package as Node would resolve it for the application.
 * @param feature - what needs it, named in the error
 * @throws MissingPeerDependencyError if prom-client is not installed.
 */
export function loadPromClient(feature: string): PromClient {
  if (loaded) return loaded;
  try {
    loaded = requirePeerDependency('prom-client') as PromClient;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
    throw new MissingPeerDependencyError('prom-client', PROM_CLIENT_RANGE, feature, {
      cause: error,
    });
  }
  return loaded;
}
