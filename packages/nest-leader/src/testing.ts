/**
 * Test helpers for users' own tests: `import { MemoryLock, ManualClock } from 'nest-leader/testing'`.
 * Elect leaders in memory on a clock that moves only when told to, and record what is logged
 * (`RecordingLogger`).
 */
export { ManualClock } from './testing/manual-clock.js';
export { MemoryLock, type LockOperation, type MemoryLockWrite } from './locks/memory.lock.js';
export {
  RecordingLogger,
  type RecordedLogLevel,
  type RecordedLogLine,
} from './testing/recording-logger.js';
export { MemoryShardLeaseStore, WatchableMemoryLock } from './sharding/memory-shard-lease-store.js';
