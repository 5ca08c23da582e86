/* global module */
/**
 * Import rules of the library checked by `pnpm lint` (dependency-cruiser). Type-only imports
 * count: a cycle through `import type` is still a cycle.
 *
 * The rooms of packages/nest-leader/src and who may import whom (the same map, room by room,
 * is "Source layout" in packages/nest-leader/docs/design-notes.md):
 *
 *   nest/ ──► observability/ ──► core/ ──► locks/ ──► kubernetes/ ──► peers/
 *   nest/ ──► sharding/ ─────────┘   (sharding/ also ──► locks/)
 *   testing.ts ──► testing/ ──► core/, locks/
 *   the entries index.ts (nest-leader), core.ts (nest-leader/core), observability.ts
 *   (nest-leader/observability), testing.ts (nest-leader/testing); only index.ts reaches nest/
 *
 * Inside core/: election/ ──► handoff/, schedule-ledger/ ──► core/'s root (the options, the
 * term, the observer interface, the clock and the election's messages every room speaks).
 * Inside locks/: lock-selection.ts ──► file/, kubernetes-object/ (candidacy/ ──►
 * kubernetes-object/) ──► locks/' root (ResourceLock, the record's parts, the memory and sidecar
 * locks, the sidecar's wire contract); core/ knows the locks only through that root and
 * `candidacy/candidacy.ts`.
 *
 * The sidecar is a package of its own (packages/nest-leader-elector): it imports the library only
 * through `nest-leader/core` (eslint.config.js checks that); here, only that it has no cycle.
 *
 * Each room may import the rooms to its right (and the shared root modules `errors.ts`,
 * `errors.interfaces.ts`, `errors.messages.ts`, `format.ts`), never one to its left. Only nest/
 * imports Nest. Each room keeps its texts in its own `*.messages.ts`.
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
      name: 'no-circular-in-the-sidecar',
      severity: 'error',
      comment: 'No import cycles in the nest-leader-elector program, type-only imports included.',
      from: { path: '^packages/nest-leader-elector/src/' },
      to: { circular: true },
    },
    {
      name: 'sidecar-without-nest',
      severity: 'error',
      comment: 'The nest-leader-elector program runs the core elector on a Lease, without Nest.',
      from: { path: '^packages/nest-leader-elector/src/' },
      to: { path: '@nestjs/' },
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
      ['nest', 'observability', 'sharding', 'testing', 'kubernetes'],
      'The core (elector, term, clock, options) knows locks only through the ResourceLock ' +
        'interface; Nest, observers and sharded leadership build on it, not the other way round.',
    ),
    {
      name: 'core-root-is-the-shared-vocabulary',
      severity: 'error',
      comment:
        "core/'s root (options, term, observer interface, clock, election messages) is what " +
        'every room of core/ speaks: it imports none of them.',
      from: { path: `${SRC}core/[^/]+$` },
      to: { path: `${SRC}core/[^/]+/` },
    },
    layer(
      'handoff-below-the-elector',
      'core/handoff',
      ['core/election', 'core/schedule-ledger'],
      'Handoff, stop handover, preference and coordinated election are parts the elector ' +
        'composes (core/election/leader-elector.parts.ts); they never import the elector.',
    ),
    layer(
      'schedule-ledger-below-the-elector',
      'core/schedule-ledger',
      ['core/election', 'core/handoff'],
      'The schedule ledger is a record the elector stamps and src/nest keeps; it imports ' +
        "neither the elector nor the handoff, only core/'s root.",
    ),
    {
      name: 'core-knows-locks-through-the-seam',
      severity: 'error',
      comment:
        'The core reads and writes records through ResourceLock and never names a lock kind: ' +
        "of locks/ it imports the root's interfaces and candidacy/candidacy.ts only.",
      from: { path: `${SRC}core/` },
      to: {
        path: `${SRC}locks/((file|kubernetes-object)/|candidacy/lease-candidate|[^/]*\\.lock\\.ts$|lock-selection)`,
      },
    },
    layer(
      'locks-never-import-the-elector',
      'locks',
      ['core', 'nest', 'observability', 'sharding', 'testing'],
      'Locks store a record; they never import the elector or anything built on it.',
    ),
    {
      name: 'lock-kinds-below-lock-selection',
      severity: 'error',
      comment:
        "locks/' root (ResourceLock, the record's parts, the memory and sidecar locks) imports no " +
        'lock room; only lock-selection.ts, which builds the lock a user names, knows them all.',
      from: { path: `${SRC}locks/[^/]+$`, pathNot: `${SRC}locks/lock-selection\\.ts$` },
      to: { path: `${SRC}locks/[^/]+/` },
    },
    layer(
      'file-lock-knows-no-kubernetes-object',
      'locks/file',
      ['locks/kubernetes-object', 'locks/candidacy'],
      'The file lock and its process proof stand alone beside the Kubernetes-object locks.',
    ),
    layer(
      'kubernetes-object-locks-know-no-file-lock',
      'locks/kubernetes-object',
      ['locks/file', 'locks/candidacy'],
      'The Lease and ConfigMap locks stand alone beside the file lock and the candidacy.',
    ),
    layer(
      'kubernetes-is-plumbing',
      'kubernetes',
      ['core', 'locks', 'nest', 'observability', 'sharding', 'testing'],
      'src/kubernetes (client loading, kubeconfig, connections, requests, API errors, names) ' +
        'knows nothing of elections or locks.',
    ),
    layer(
      'observability-below-nest',
      'observability',
      ['nest', 'testing'],
      'Metrics, Events and pod labels are Nest-free observers; src/nest builds their providers.',
    ),
    layer(
      'sharding-without-nest',
      'sharding',
      ['nest', 'observability', 'testing'],
      'Sharded leadership is framework-free: it builds on the elector (core/) and the locks; ' +
        'src/nest gives it its Nest glue.',
    ),
    {
      name: 'test-helpers-for-the-testing-entry',
      severity: 'error',
      comment:
        'src/testing/ (ManualClock, RecordingLogger) is published through the testing entry ' +
        '(src/testing.ts) alone; the library never runs on a test helper.',
      from: { path: SRC, pathNot: `${SRC}(testing\\.ts$|testing/)` },
      to: { path: `${SRC}testing/` },
    },
    layer(
      'test-helpers-on-the-core',
      'testing',
      ['nest', 'observability', 'sharding', 'kubernetes'],
      "The test helpers stand on the core and the locks only, as users' own tests do.",
    ),
    {
      name: 'framework-free-entries-without-nest',
      severity: 'error',
      comment:
        'nest-leader/core, nest-leader/observability and nest-leader/testing serve programs ' +
        'without Nest: their entries (src/core.ts, src/observability.ts, src/testing.ts) never ' +
        'reach src/nest.',
      from: { path: `${SRC}(core|observability|testing)\\.ts$` },
      to: { path: `${SRC}nest/` },
    },
    layer(
      'peers-is-a-leaf',
      'peers',
      ['core', 'locks', 'kubernetes', 'nest', 'observability', 'sharding', 'testing'],
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
