import { errorText } from '../format.js';

/** The texts of `client-node.loader.ts`: client-node is missing, or installed but cannot be loaded. */
export const clientNodeMessages = {
  missing: (error: unknown) =>
    'Kubernetes Leases need the peer dependency @kubernetes/client-node (^2), which could not ' +
    `be loaded: ${errorText(error)}. Install it, or choose lock 'file' or 'memory'.`,
  esmOnly: (error: unknown) =>
    '@kubernetes/client-node is installed, but it is ESM-only (2.x) and this loader cannot ' +
    `require() it: ${firstLine(error)}. In Jest tests, elect on lock 'memory' (or leave lock ` +
    "'auto' without a Kubernetes configuration: it picks the memory lock under Jest), or run " +
    'Jest with NODE_OPTIONS=--experimental-vm-modules; elsewhere use Node ≥ 22.12, which ' +
    'require()s ES modules.',
};

function firstLine(error: unknown): string {
  return errorText(error).split('\n')[0]!.trim();
}
