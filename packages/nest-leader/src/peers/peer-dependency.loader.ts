/**
 * `require` for peer dependencies loaded on first use (`@kubernetes/client-node` for Leases,
 * `prom-client` for metrics), resolved from this package as Node resolves the application's.
 *
 * This is the only file that uses `import.meta` (for `createRequire`); a CommonJS build
 * replaces it with one that calls `require` directly. Node ≥ 22.12 can `require()` ESM-only
 * packages (client-node 2.x) and gets the same module instance an `import` gets.
 */
import { createRequire } from 'node:module';

let load: NodeJS.Require | undefined;

/** `require` as this package's code would call it. */
function loader(): NodeJS.Require {
  // The CommonJS build compiles this file too, then uses peer-dependency.loader-cjs.cts (tshy).
  // eslint-disable-next-line @typescript-eslint/ban-ts-comment
  // @ts-ignore TS1470: no import.meta in CommonJS output
  load ??= createRequire(import.meta.url);
  return load;
}

/**
 * The module `name`, loaded synchronously and cached by Node.
 * @throws whatever `require` throws, e.g. an error with `code: 'MODULE_NOT_FOUND'`.
 */
export function requirePeerDependency(name: string): unknown {
  return loader()(name);
}

/**
 * The path of the module `name` as {@link requirePeerDependency} would load it.
 * @throws whatever `require.resolve` throws, e.g. an error with `code: 'MODULE_NOT_FOUND'`.
 */
export function resolvePeerDependency(name: string): string {
  return loader().resolve(name);
}
