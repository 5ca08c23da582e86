/**
 * The laptop loop on the file lock, with real OS processes: a leader killed with SIGKILL is
 * proven gone by the OS and replaced without waiting out its lease; a SIGTERM release reaches
 * a follower through its watch, not its next poll; a holder whose process cannot be checked
 * (another PID namespace) is waited for, and the follower says whom it waits for and until when.
 *
 * Bounds here are far from the measured figures (those are in bench/: file-lock handover), so a
 * loaded machine cannot make them flake: "faster than the lease" is asserted against a 15 s
 * lease, "not by polling" against a 20 s retry period.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { LeaderElectionTimings } from 'nest-leader';
import { CandidateProcess } from '../support/candidate-process.js';
import { eventually } from '../support/eventually.js';
import { monotonicNowMs } from '../support/monotonic-time.js';

const DEFAULT_TIMINGS: LeaderElectionTimings = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};
const onLinux = process.platform === 'linux';

let dir: string;
let path: string;
const started: CandidateProcess[] = [];

/** Starts a candidate on the lease file at `timings`, under `wrapper` if given. */
async function candidate(
  identity: string,
  timings: LeaderElectionTimings,
  wrapper?: string[],
): Promise<CandidateProcess> {
  const c = await CandidateProcess.start({
    implementation: 'nest-leader',
    lock: 'file',
    lockFile: path,
    identity,
    timings,
    wrapper,
  });
  started.push(c);
  return c;
}

/** Starts a candidate and waits until it leads. */
async function leadingCandidate(
  identity: string,
  timings: LeaderElectionTimings,
  wrapper?: string[],
): Promise<CandidateProcess> {
  const c = await candidate(identity, timings, wrapper);
  await eventually(() => assert.ok(c.leading, `${identity} leads`), {
    timeoutMs: 10_000,
    intervalMs: 20,
  });
  return c;
}

const holderOf = (): { holderIdentity: string; leaseTransitions: number } =>
  JSON.parse(readFileSync(path, 'utf8')).record;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'nest-leader-holder-gone-'));
  path = join(dir, 'jobs.lease.json');
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((c) => c.dispose()));
  rmSync(dir, { recursive: true, force: true });
});

describe('FileLock holder proof, with real processes (15/10/2 timings)', { skip: !onLinux }, () => {
  test(
    'SIGKILL of the leader: a follower takes over long before the lease expires, naming the proof',
    { timeout: 30_000 },
    async () => {
      const leader = await leadingCandidate('p1', DEFAULT_TIMINGS);
      const follower = await candidate('p2', DEFAULT_TIMINGS);
      await follower.waitFor(
        (e) => /p1/.test(e.message ?? '') && /leads|leader/i.test(e.message ?? ''),
        10_000,
      );

      leader.kill('SIGKILL');
      const killedMs = monotonicNowMs();
      const took = await follower.waitFor((e) => e.event === 'started', 14_000);

      assert.ok(took.monotonicMs - killedMs < 7_500, `took ${took.monotonicMs - killedMs} ms`);
      const proof = await follower.waitFor((e) => /is gone/.test(e.message ?? ''), 1_000);
      // The proof is the PID gone, or — when the test process has not reaped its child yet —
      // the PID a zombie: both prove the holder dead.
      assert.match(
        proof.message!,
        new RegExp(`PID ${leader.pid} (no longer exists|has exited \\(a zombie not yet reaped\\))`),
      );
      assert.equal(holderOf().holderIdentity, 'p2');
    },
  );

  test(
    'a process restarted after SIGKILL of the leader leads without waiting out the lease, with the next term',
    { timeout: 30_000 },
    async () => {
      const leader = await leadingCandidate('p1', DEFAULT_TIMINGS);
      const transitions = holderOf().leaseTransitions;
      leader.kill('SIGKILL');
      await leader.exited;

      const restartedMs = monotonicNowMs();
      const restarted = await candidate('p1-restarted', DEFAULT_TIMINGS);
      const took = await restarted.waitFor((e) => e.event === 'started', 14_000);

      assert.ok(
        took.monotonicMs - restartedMs < 7_500,
        `took ${took.monotonicMs - restartedMs} ms`,
      );
      assert.equal(took.leaseTransitions, transitions + 1);
    },
  );

  test(
    'SIGTERM of the leader: the follower learns of the release from its watch, not its next poll',
    { timeout: 60_000 },
    async () => {
      // A 20 s retry period: a follower that only polled would take 20–24 s.
      const timings = {
        leaseDurationSeconds: 60,
        renewDeadlineSeconds: 40,
        retryPeriodSeconds: 20,
      };
      const leader = await leadingCandidate('p1', timings);
      const follower = await candidate('p2', timings);
      await follower.waitFor((e) => /p1/.test(e.message ?? ''), 10_000);

      leader.kill('SIGTERM');
      await leader.exited;
      const exitedMs = monotonicNowMs();
      const took = await follower.waitFor((e) => e.event === 'started', 30_000);

      assert.ok(took.monotonicMs - exitedMs < 10_000, `took ${took.monotonicMs - exitedMs} ms`);
      // The quiet happy path: the release is routine (debug); the old leader logs one line for
      // the change, and no warning.
      const lines = leader.events.filter((e) => e.event === 'log');
      assert.deepEqual(
        lines.filter((e) => /stopped leading|released/.test(e.message ?? '')).map((e) => e.level),
        ['info'],
      );
      assert.match(
        lines.find((e) => /stopped leading/.test(e.message ?? ''))!.message!,
        /: stopped\.$/,
      );
      assert.deepEqual(
        lines.filter((e) => e.level !== 'info'),
        [],
      );
    },
  );
});

/** Whether this machine lets us start a process in a new PID namespace (root, util-linux). */
function canUnshare(): boolean {
  try {
    execFileSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('FileLock holder in another PID namespace', { skip: !onLinux || !canUnshare() }, () => {
  test(
    'is waited for until its lease expires, and the follower says whom it waits for and until when',
    { timeout: 30_000 },
    async () => {
      const timings = { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 1 };
      const leader = await leadingCandidate('p1', timings, [
        'unshare',
        '--pid',
        '--fork',
        '--mount-proc',
        '--kill-child',
      ]);
      const follower = await candidate('p2', timings);
      const waiting = await follower.waitFor(
        (e) => /Waiting for "p1"/.test(e.message ?? ''),
        10_000,
      );
      assert.match(waiting.message!, /another PID namespace/);
      assert.match(waiting.message!, /leads until \d{4}-\d\d-\d\dT[\d:.]+Z unless it renews/);

      leader.kill('SIGKILL'); // unshare --kill-child takes the candidate with it
      const killedMs = monotonicNowMs();
      const took = await follower.waitFor((e) => e.event === 'started', 15_000);

      // Not proven gone: the follower waited out (most of) the 4 s lease.
      assert.ok(
        took.monotonicMs - killedMs >= 2_000,
        `took over after ${took.monotonicMs - killedMs} ms`,
      );
      assert.ok(!follower.events.some((e) => /is gone/.test(e.message ?? '')));
    },
  );
});
