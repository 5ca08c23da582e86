// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '.cache/**',
      '**/dist/**',
      '**/build/**',
      'tools/**',
      'test/control-plane/**',
      'bench/results/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        performance: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-floating-promises': 'off',
    },
  },
  {
    // @kubernetes/client-node costs over a second to load: the library imports its types
    // only, and loads it through kubernetes/client-node.loader.ts when a Lease is built.
    files: ['packages/nest-leader/src/**/*.ts'],
    ignores: ['packages/nest-leader/src/kubernetes/client-node.loader.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@kubernetes/client-node',
              allowTypeImports: true,
              message: 'Use `import type` and loadClientNode() (kubernetes/client-node.loader.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // Only src/nest imports Nest: the core, the locks, the Kubernetes plumbing, the observers,
    // sharded leadership and the shared errors/messages stay framework-free. Which folder may
    // import which is checked by dependency-cruiser (.dependency-cruiser.cjs, `pnpm lint:imports`).
    files: ['packages/nest-leader/src/**/*.ts', 'packages/nest-leader/src/**/*.cts'],
    ignores: [
      'packages/nest-leader/src/nest/**',
      // loads the optional Nest peers (Terminus, microservices) for src/nest
      'packages/nest-leader/src/peers/optional-peers.ts',
      'packages/nest-leader/src/peers/optional-peers-cjs.cts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*'],
              message:
                'Only src/nest imports Nest (core, locks, kubernetes, observability, sharding stay framework-free).',
            },
          ],
        },
      ],
    },
  },
  {
    // The nest-leader-elector sidecar is built on the library's framework-free entry alone: it
    // imports nest-leader/core (the proof that entry is complete), never the Nest entry, another
    // subpath, the library's files, or Nest.
    files: ['packages/nest-leader-elector/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'nest-leader',
              message: 'The sidecar imports the library only through nest-leader/core.',
            },
          ],
          patterns: [
            {
              group: ['nest-leader/*', '!nest-leader/core'],
              message: 'The sidecar imports the library only through nest-leader/core.',
            },
            {
              regex: '^\\.\\./|(^|/)nest-leader/(src|dist|build)(/|$)',
              message:
                "The sidecar imports the library only through nest-leader/core, never the library's files.",
            },
            {
              group: ['@nestjs/*'],
              message: 'The sidecar runs without Nest.',
            },
          ],
        },
      ],
    },
  },
  {
    // The demo stays a demo: tests and benchmarks import from it only what is the demo — its
    // contracts (demo-events, demo.constants, leadership-overlaps, health), running it
    // (replica-process, replica-fleet, metrics-scrape, demo-cli's legend, demo-manifests), and
    // the starters the demo runs itself (control-plane-process, node-cluster, kube-access). The
    // launcher's own parts (lock-setup, status-board, run-report, chaos-rounds, stop-signals,
    // demo-say, cluster-demo, raw-yaml) are not for tests; test helpers live in test/support.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@nest-leader/demo/launcher/*',
                '!@nest-leader/demo/launcher/replica-process',
                '!@nest-leader/demo/launcher/replica-fleet',
                '!@nest-leader/demo/launcher/metrics-scrape',
                '!@nest-leader/demo/launcher/demo-cli',
                '!@nest-leader/demo/launcher/demo-manifests',
                '!@nest-leader/demo/launcher/control-plane-process',
                '!@nest-leader/demo/launcher/node-cluster',
                '!@nest-leader/demo/launcher/kube-access',
              ],
              message:
                'Tests import only what is the demo (see eslint.config.js); put test helpers in test/support.',
            },
          ],
        },
      ],
    },
  },
);
