/**
 * The demo's failover scenario on the file-lock default: no cluster configured (no KUBECONFIG,
 * no ~/.kube/config, not in a pod), so `lock: 'auto'` falls back to a FileLock in the demo
 * project's directory in this user's directory under the OS temp directory — here a fresh
 * TMPDIR per run (no XDG_RUNTIME_DIR), with HOME pointing there too.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { defaultFileLockDirectory, FileLock, userFileLockDirectory } from 'nest-leader/core';
import { describeFailoverScenario } from './support/failover-scenario.js';

describeFailoverScenario('demo on the file-lock default (no cluster)', async (leaseName) => {
  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-e2e-file-'));
  // The demo's own directory under its TMPDIR: one per project (the demo app's package root).
  const demoRoot = dirname(
    createRequire(import.meta.url).resolve('@nest-leader/demo/package.json'),
  );
  const lockFile = join(
    defaultFileLockDirectory(realpathSync(demoRoot), userFileLockDirectory({}, dir)),
    `${leaseName}.lease.json`,
  );
  const lock = new FileLock({ path: lockFile });
  return {
    kind: 'file',
    env: {
      TMPDIR: dir,
      XDG_RUNTIME_DIR: undefined,
      HOME: dir,
      KUBECONFIG: undefined,
      LEADER_LOCK: undefined,
      LEADER_LOCK_DIR: undefined,
    },
    async readLease() {
      const stored = await lock.get();
      return (
        stored && {
          holderIdentity: stored.record.holderIdentity,
          leaseTransitions: stored.record.leaseTransitions,
        }
      );
    },
    async verifyBackend(fleet) {
      assert.ok(existsSync(lockFile), `the lease file is ${lockFile}`);
      for (const replica of fleet.replicas) {
        assert.match(
          replica.stderrTail,
          /No Kubernetes cluster configured/,
          `${replica.identity} says it fell back`,
        );
      }
    },
    async dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
