import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { eventually } from '../support/eventually.js';
import { CandidateProcess } from '../support/candidate-process.js';

const leaders = (candidates: CandidateProcess[]): CandidateProcess[] =>
  candidates.filter((c) => c.leading);

test(
  'FileLock across 3 OS processes: exactly one leads; SIGKILL it and exactly one other takes over with the next term',
  { timeout: 20_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nest-leader-processes-'));
    const path = join(dir, 'jobs.lease.json');
    const candidates = await Promise.all(
      ['p1', 'p2', 'p3'].map((identity) =>
        CandidateProcess.start({
          implementation: 'nest-leader',
          lock: 'file',
          lockFile: path,
          identity,
          timings: { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.5 },
        }),
      ),
    );
    after(async () => {
      await Promise.all(candidates.map((c) => c.dispose()));
      rmSync(dir, { recursive: true, force: true });
    });
    const holder = (): { holderIdentity: string; leaseTransitions: number } =>
      JSON.parse(readFileSync(path, 'utf8')).record;

    await eventually(() => assert.ok(leaders(candidates).length > 0, 'a leader'), {
      timeoutMs: 5_000,
      intervalMs: 20,
    });
    for (let i = 0; i < 10; i++) {
      await sleep(150);
      assert.equal(leaders(candidates).length, 1);
    }
    const first = leaders(candidates)[0]!;
    assert.equal(holder().holderIdentity, first.identity);
    const transitionsBefore = holder().leaseTransitions;

    first.kill('SIGKILL');
    const rest = candidates.filter((c) => c !== first);
    await eventually(() => assert.ok(leaders(rest).length > 0, 'a new leader'), {
      timeoutMs: 8_000,
      intervalMs: 20,
    });

    for (let i = 0; i < 10; i++) {
      await sleep(150);
      assert.equal(leaders(rest).length, 1);
    }
    const second = leaders(rest)[0]!;
    assert.equal(holder().holderIdentity, second.identity);
    assert.equal(holder().leaseTransitions, transitionsBefore + 1);
    assert.deepEqual(
      second.eventsWhere((e) => e.event === 'started').map((e) => e.leaseTransitions),
      [transitionsBefore + 1],
    );
  },
);
