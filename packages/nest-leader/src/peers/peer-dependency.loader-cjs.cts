/**
 * The CommonJS build's `peer-dependency.loader.ts` (tshy dialect polyfill): CommonJS has no
 * `import.meta`, and needs none: its own `require` resolves peers from this package. Under Node
 * the package's `module-sync` export loads the ESM build instead; this one serves tools with
 * their own CommonJS loader (Jest), where an ESM-only peer (client-node 2.x) loads only if the
 * tool can `require()` ESM.
 */

/**
 * The module `name`, loaded synchronously and cached.
 * @throws whatever `require` throws, e.g. an error with `code: 'MODULE_NOT_FOUND'`.
 */
export function requirePeerDependency(name: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose
  return require(name);
}

/**
 * The path of the module `name` as {@link requirePeerDependency} would load it.
 * @throws whatever `require.resolve` throws, e.g. an error with `code: 'MODULE_NOT_FOUND'`.
 */
export function resolvePeerDependency(name: string): string {
  return require.resolve(name);
}
