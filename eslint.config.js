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
    // only, and loads it through locks/client-node.loader.ts when a Lease is built.
    files: ['packages/nest-leader/src/**/*.ts'],
    ignores: ['packages/nest-leader/src/locks/client-node.loader.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@kubernetes/client-node',
              allowTypeImports: true,
              message: 'Use `import type` and loadClientNode() (locks/client-node.loader.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // The core (election algorithm and locks) stays framework-free.
    files: [
      'packages/nest-leader/src/core/**/*.ts',
      'packages/nest-leader/src/election/**/*.ts',
      'packages/nest-leader/src/locks/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*'],
              message: 'The core (src/core, src/election, src/locks) never imports Nest.',
            },
          ],
        },
      ],
    },
  },
);
