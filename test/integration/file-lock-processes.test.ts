import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';

const fixture = fileURLToPath(new URL('../support/file-candidate.js', import.meta.url));

interface Candidate {
  identity: string;
  child: ChildProcess;
  leading: boolean;
  starts: number[];
}

function spawnCandidate(path: string, identity: string): Candidate {
  const child = spawn(process.execPath, [fixture, path, identity], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const candidate: Candidate = { identity, child, leading: false, starts: [] };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const event = JSON.parse(line) as { event: string; leaseTransitions: number };
    candidate.leading = event.event === 'started';
    if (event.event === 'started') candidate.starts.push(event.leaseTransitions);
  });
  return candidate;
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

const leaders = (candidates: Candidate[]): Candidate[] => candidates.filter((c) => c.leading);

test(
  'FileLock across 3 OS processes: exactly one leads; SIGKILL it and another takes over',
  { timeout: 20_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nest-leader-processes-'));
    const path = join(dir, 'jobs.lease.json');
    const candidates = ['p1', 'p2', 'p3'].map((id) => spawnCandidate(path, id));
    after(() => {
      for (const c of candidates) c.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    const holder = (): { holderIdentity: string; leaseTransitions: number } =>
      JSON.parse(readFileSync(path, 'utf8')).record;

    await waitFor(() => leaders(candidates).length > 0, 5_000);
    for (let i = 0; i < 10; i++) {
      await sleep(150);
      assert.equal(leaders(candidates).length, 1);
    }
    const first = leaders(candidates)[0]!;
    assert.equal(holder().holderIdentity, first.identity);
    const transitionsBefore = holder().leaseTransitions;

    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    const rest = candidates.filter((c) => c !== first);
    await waitFor(() => leaders(rest).length > 0, 8_000);
    const takeoverMs = Date.now() - killedAt;

    assert.ok(
      takeoverMs >= 500,
      `took over after ${takeoverMs} ms: before the Lease could have expired`,
    );
    for (let i = 0; i < 10; i++) {
      await sleep(150);
      assert.equal(leaders(rest).length, 1);
    }
    const second = leaders(rest)[0]!;
    assert.equal(holder().holderIdentity, second.identity);
    assert.equal(holder().leaseTransitions, transitionsBefore + 1);
    assert.deepEqual(second.starts, [transitionsBefore + 1]);
  },
);
