/** Test helpers for users' own tests: `import { MemoryLock } from 'nest-leader/testing'`. */
export {};
