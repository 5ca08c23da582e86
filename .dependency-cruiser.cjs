/* global module */
/**
 * Import rules of the library checked by `pnpm lint` (dependency-cruiser). Type-only imports
 * count: a cycle through `import type` is still a cycle.
 *
 * The folders of packages/nest-leader/src and who may import whom (DESIGN.md's layout):
 *
 *   nest/ ──► observability/ ──► core/ ──► locks/ ──► kubernetes/ ──► peers/
 *   sidecar/ ─────────────────────┘
 *
 * Each folder may import the folders to its right (and the shared root modules `errors.ts`,
 * `errors.interfaces.ts`, `errors.messages.ts`, `format.ts`), never one to its left. Only nest/
 * imports Nest. Each folder keeps its texts in its own `*.messages.ts`.
 */
const SRC = '^packages/nest-leader/src/';

/** A rule that forbids imports from `from` (a folder) into any of `to`. */
const layer = (name, from, to, comment) => ({
  name,
  severity: 'error',
  comment,
  from: { path: `${SRC}${from}/` },
  to: { path: `${SRC}(${to.join('|')})/` },
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles in the library, type-only imports included.',
      from: { path: SRC },
      to: { circular: true },
    },
    {
      name: 'nest-only-in-nest',
      severity: 'error',
      comment:
        'Only src/nest imports Nest (also enforced by eslint); src/peers/optional-peers.ts names ' +
        'the optional Nest peers it loads for src/nest.',
      from: {
        path: SRC,
        pathNot: [`${SRC}nest/`, `${SRC}peers/optional-peers(-cjs)?\\.c?ts$`],
      },
      to: { path: '@nestjs/' },
    },
    {
      name: 'optional-nest-peers-for-nest-only',
      severity: 'error',
      comment: 'src/peers/optional-peers.ts loads Nest packages: only src/nest may use it.',
      from: { path: SRC, pathNot: `${SRC}(nest/|peers/)` },
      to: { path: `${SRC}peers/optional-peers` },
    },
    {
      name: 'shared-modules-stay-low',
      severity: 'error',
      comment:
        'errors.ts, errors.interfaces.ts, errors.messages.ts and format.ts are imported by every ' +
        'folder: they import nothing of the library but the lock types (src/locks/resource-lock.ts).',
      from: { path: `${SRC}(errors|errors\\.interfaces|errors\\.messages|format)\\.ts$` },
      to: {
        path: SRC,
        pathNot: `${SRC}(errors|errors\\.interfaces|errors\\.messages|format|locks/resource-lock)\\.ts$`,
      },
    },
    layer(
      'core-below-nest',
      'core',
      ['nest', 'observability', 'sidecar', 'kubernetes'],
      'The core (elector, term, clock, options) knows locks only through the ResourceLock ' +
        'interface; Nest, observers and the sidecar build on it, not the other way round.',
    ),
    layer(
      'locks-never-import-the-elector',
      'locks',
      ['core', 'nest', 'observability', 'sidecar'],
      'Locks store a record; they never import the elector or anything built on it.',
    ),
    layer(
      'kubernetes-is-plumbing',
      'kubernetes',
      ['core', 'locks', 'nest', 'observability', 'sidecar'],
      'src/kubernetes (client loading, kubeconfig, connections, requests, API errors, names) ' +
        'knows nothing of elections or locks.',
    ),
    layer(
      'observability-below-nest',
      'observability',
      ['nest', 'sidecar'],
      'Metrics, Events and pod labels are Nest-free observers; src/nest builds their providers.',
    ),
    layer(
      'sidecar-without-nest',
      'sidecar',
      ['nest', 'observability'],
      'The sidecar program runs the core elector on a lock, without Nest.',
    ),
    layer(
      'peers-is-a-leaf',
      'peers',
      ['core', 'locks', 'kubernetes', 'nest', 'observability', 'sidecar'],
      'src/peers only loads optional peer dependencies.',
    ),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'packages/nest-leader/tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(build|dist)/' },
  },
};
