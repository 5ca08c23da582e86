/* global module */
/**
 * Import rules of the library checked by `pnpm lint` (dependency-cruiser). Type-only imports
 * count: a cycle through `import type` is still a cycle.
 *
 * ROOMS below is the map of packages/nest-leader/src, one row a room, from the top floor down:
 * the room and the rooms it may import (every room may also import the shared modules
 * `errors.ts`, `errors.interfaces.ts`, `errors.messages.ts` and `format.ts`). It is the
 * "Layout" table of packages/nest-leader/README.md, row for row; the long map, with every
 * file's role, is "Source layout" in packages/nest-leader/docs/design-notes.md. Each row becomes
 * one rule: an import from the room to any other room it does not name is an error. The rules
 * after them say what the map cannot: no cycles, only nest/ imports Nest, the shared modules
 * stay low, the test helpers are the testing entry's alone.
 *
 * The sidecar is a package of its own (packages/nest-leader-elector): it imports the library only
 * through `nest-leader/core` (eslint.config.js checks that); here, only that it has no cycle and
 * no Nest.
 */
const SRC = '^packages/nest-leader/src/';

/** The shared modules every room may import. */
const SHARED = `${SRC}(errors|errors\\.interfaces|errors\\.messages|format)\\.ts$`;
/** The lock seam: locks/' root but the lock kinds and lock-selection.ts, and the candidacy's interface. */
const LOCK_SEAM = [
  `${SRC}locks/(?![^/]*\\.lock\\.ts$|lock-selection)[^/]+$`,
  `${SRC}locks/candidacy/candidacy\\.ts$`,
];
const CORE_ROOT = `${SRC}core/[^/]+$`;
const LOCKS_ROOT = `${SRC}locks/[^/]+$`;
const dir = (room) => `${SRC}${room}/`;

/**
 * Each room: `path` (what it holds; `pathNot` leaves a file out), `mayImport` (the rooms it may
 * import besides itself and the shared modules), and why.
 */
const ROOMS = [
  {
    room: 'nest/',
    path: dir('nest'),
    mayImport: ['observability', 'sharding', 'core', 'locks', 'kubernetes', 'peers'].map(dir),
    why: 'The Nest layer stands on everything below it; nothing framework-free imports it.',
  },
  {
    room: 'observability/',
    path: dir('observability'),
    mayImport: ['sharding', 'core', 'locks', 'kubernetes', 'peers'].map(dir),
    why: 'Metrics, Events and pod labels are Nest-free observers of the elections below them.',
  },
  {
    room: 'sharding/',
    path: dir('sharding'),
    mayImport: ['core', 'locks', 'kubernetes'].map(dir),
    why: 'Sharded leadership builds on the elector and the locks; src/nest gives it its Nest glue.',
  },
  {
    room: 'testing/',
    path: dir('testing'),
    mayImport: ['core', 'locks'].map(dir),
    why: "The test helpers stand on the core and the locks only, as users' own tests do.",
  },
  {
    room: 'core/election/',
    path: dir('core/election'),
    mayImport: [dir('core/handoff'), dir('core/schedule-ledger'), CORE_ROOT, ...LOCK_SEAM],
    why: 'The elector composes the handoff and the schedule ledger; it knows locks by the seam.',
  },
  {
    room: 'core/handoff/',
    path: dir('core/handoff'),
    mayImport: [CORE_ROOT, ...LOCK_SEAM],
    why: 'Handoff, stop handover, preference and coordinated election never import the elector.',
  },
  {
    room: 'core/schedule-ledger/',
    path: dir('core/schedule-ledger'),
    mayImport: [CORE_ROOT, ...LOCK_SEAM],
    why: 'The schedule ledger is a record the elector stamps; it imports no other core room.',
  },
  {
    room: 'core/ (root)',
    path: CORE_ROOT,
    mayImport: LOCK_SEAM,
    why: "core/'s root (options, term, observer, clock) is what every core room speaks.",
  },
  {
    room: 'locks/ (root)',
    path: LOCKS_ROOT,
    pathNot: `${SRC}locks/lock-selection\\.ts$`,
    mayImport: [dir('kubernetes')],
    why: "locks/' root (the seam, the memory and sidecar locks) knows no lock room.",
  },
  {
    room: 'locks/lock-selection.ts',
    path: `${SRC}locks/lock-selection\\.ts$`,
    mayImport: [dir('locks'), dir('kubernetes')],
    why: 'selectLock() builds the lock a user names: the one file that knows every lock kind.',
  },
  {
    room: 'locks/kubernetes-object/',
    path: dir('locks/kubernetes-object'),
    mayImport: [LOCKS_ROOT, dir('kubernetes')],
    why: 'The Lease and ConfigMap locks stand alone beside the file lock and the candidacy.',
  },
  {
    room: 'locks/file/',
    path: dir('locks/file'),
    mayImport: [LOCKS_ROOT, dir('kubernetes')],
    why: 'The file lock and its process proof stand alone beside the Kubernetes-object locks.',
  },
  {
    room: 'locks/candidacy/',
    path: dir('locks/candidacy'),
    mayImport: [LOCKS_ROOT, dir('locks/kubernetes-object'), dir('kubernetes')],
    why: "The coordinated election's LeaseCandidate is written like the Lease lock's objects.",
  },
  {
    room: 'kubernetes/',
    path: dir('kubernetes'),
    mayImport: [dir('peers')],
    why: 'Client loading, kubeconfig, connections, requests, API errors, names: no elections.',
  },
  {
    room: 'peers/',
    path: dir('peers'),
    mayImport: [],
    why: 'src/peers only loads optional peer dependencies.',
  },
];

/** One room's rule: an import into any room of the library it does not name is an error. */
const roomRule = ({ room, path, pathNot, mayImport, why }) => ({
  name: `room ${room}`,
  severity: 'error',
  comment: `${why} May import: ${mayImport.length ? mayImport.join(', ') : 'nothing'}.`,
  from: pathNot ? { path, pathNot } : { path },
  to: { path: SRC, pathNot: [path, SHARED, ...mayImport] },
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...ROOMS.map(roomRule),
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
    {
      name: 'test-helpers-for-the-testing-entry',
      severity: 'error',
      comment:
        'src/testing/ (ManualClock, RecordingLogger) is published through the testing entry ' +
        '(src/testing.ts) alone; the library never runs on a test helper.',
      from: { path: SRC, pathNot: `${SRC}(testing\\.ts$|testing/)` },
      to: { path: `${SRC}testing/` },
    },
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
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'packages/nest-leader/tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(build|dist)/' },
  },
};
