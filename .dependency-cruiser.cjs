/* global module */
/**
 * Import rules of the library checked by `pnpm lint` (dependency-cruiser). Type-only imports
 * count: a cycle through `import type` is still a cycle.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles in the library, type-only imports included.',
      from: { path: '^packages/nest-leader/src/' },
      to: { circular: true },
    },
    {
      name: 'core-is-framework-free',
      severity: 'error',
      comment: 'src/core, src/election and src/locks never import Nest (also enforced by eslint).',
      from: { path: '^packages/nest-leader/src/(core|election|locks)/' },
      to: { path: '@nestjs/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'packages/nest-leader/tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(build|dist|node_modules)/' },
  },
};
