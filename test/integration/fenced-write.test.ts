/**
 * The fencing token end to end (the Kleppmann scenario a lease alone cannot prevent): two
 * writer processes on one Lease write to one real SQLite database (node:sqlite) with their
 * term's leaseTransitions. The leader is SIGSTOPped after its gate check and before its write;
 * the other takes over and writes with a newer token; when the old leader wakes, its write
 * reaches the database and the database refuses it. The same write to an unfenced table lands.
 * The writers are nest-leader candidates of the candidate harness in their fenced-write mode
 * (`nest-leader-candidate.ts --fenced-db`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { CandidateProcess } from '../support/candidate-process.js';
import { leadershipIntervals, overlappingIntervals } from '../support/leadership-timeline.js';
import { monotonicNowMs } from '../support/monotonic-time.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const leaseDurationMs = FAST_TIMINGS.leaseDurationSeconds * 1000;

/** `T` while stopped, as /proc/<pid>/stat reports it. */
function processState(pid: number | undefined): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
}

describe('fenced write to a real database: a paused leader is refused by the database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fenced-'));
  const dbPath = join(dir, 'ledger.db');
  const leaseName = uniqueLeaseName('fenced');
  const writers: CandidateProcess[] = [];
  const pauseFile = (identity: string) => join(dir, `pause-${identity}`);

  before(async () => {
    await grantLeaseAccess(cluster, 'alice');
    await grantLeaseAccess(cluster, 'bob');
  });
  after(async () => {
    for (const w of writers) {
      w.resume();
      await w.dispose();
    }
    await revokeLeaseAccess(cluster, 'alice');
    await revokeLeaseAccess(cluster, 'bob');
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    'SIGSTOP after the gate, before the write: the successor writes first; the stale write is refused by SQLite',
    {
      timeout: 60_000,
    },
    async () => {
      // Each ready (Node and the client loaded: 10 s and more on a loaded machine) before the
      // first write's bound starts.
      for (const identity of ['alice', 'bob']) {
        await CandidateProcess.startReady(
          {
            implementation: 'nest-leader',
            kubeconfigPath: cluster.identities[identity]!.kubeconfigPath,
            leaseName,
            namespace: cluster.namespace,
            identity,
            timings: FAST_TIMINGS,
            releaseOnCancel: false,
            extraArgs: ['--fenced-db', dbPath, '--pause-file', pauseFile(identity)],
          },
          writers,
        );
      }
      const firstWrite = await Promise.any(
        writers.map((w) =>
          w.waitFor((e) => e.event === 'write-accepted', 3 * leaseDurationMs, 'a first write'),
        ),
      );
      const old = writers.find((w) => w.identity === firstWrite.identity)!;
      const next = writers.find((w) => w !== old)!;
      const oldToken = firstWrite.token!;

      // Pause the leader inside the window between its gate check and its write (open until its
      // pause file is removed).
      writeFileSync(pauseFile(old.identity), '');
      const window = await old.waitFor((e) => e.event === 'write-window', 5000, 'its write window');
      old.pause();
      const stoppedAt = monotonicNowMs();
      assert.equal(window.token, oldToken);
      // Signal delivery is asynchronous: wait until the kernel reports it stopped.
      await eventually(
        () => assert.equal(processState(old.pid), 'T', 'the old leader is stopped'),
        { timeoutMs: 1000, intervalMs: 5 },
      );
      assert.ok(
        !old.events.some((e) => e.event === 'write-accepted' && e.monotonicMs > window.monotonicMs),
        'stopped inside its window, before its write',
      );

      // The other writer takes over (after leaseDuration) and writes with a newer token.
      const successor = await next.waitFor(
        (e) => e.event === 'write-accepted' && e.monotonicMs > stoppedAt,
        leaseDurationMs + 5000,
        'the successor’s write',
      );
      assert.ok(successor.token! > oldToken, `newer token ${successor.token} > ${oldToken}`);
      assert.ok(
        !old.events.some(
          (e) =>
            e.event.startsWith('write-') && e.event !== 'write-window' && e.monotonicMs > stoppedAt,
        ),
        'the old leader wrote nothing while stopped',
      );

      // Close its window and wake it: it continues from between its gate check and its write.
      rmSync(pauseFile(old.identity));
      const wokeAt = monotonicNowMs();
      old.resume();
      const refused = await old.waitFor(
        (e) => e.event === 'write-rejected' && e.monotonicMs > wokeAt,
        // It writes within one 20 ms poll of its pause file; the rest is slack for a busy machine.
        5000,
        'the refusal of its stale write',
      );
      assert.equal(refused.token, oldToken);
      assert.match(refused.error!, /stale fencing token/);

      // By their own events both believed they led at once: the lease alone let it happen.
      assert.deepEqual(
        overlappingIntervals(leadershipIntervals(writers)).map(([a, b]) => [
          a.identity,
          b.identity,
        ]),
        [[old.identity, next.identity]],
        'the stopped leader’s term overlaps its successor’s',
      );

      // The database's own view.
      const db = new DatabaseSync(dbPath, { readOnly: true });
      const rows = db.prepare('SELECT id, token, writer, entry FROM ledger ORDER BY id').all() as {
        token: number;
        writer: string;
        entry: string;
      }[];
      const unfenced = db.prepare('SELECT token, writer FROM unfenced ORDER BY id').all() as {
        token: number;
        writer: string;
      }[];
      db.close();
      const tokens = rows.map((r) => r.token);
      assert.deepEqual(
        tokens,
        [...tokens].sort((a, b) => a - b),
        'ledger tokens never go back',
      );
      assert.ok(
        !rows.some((r) => r.entry === refused.entry),
        'the stale entry is not in the ledger',
      );
      const firstNew = unfenced.findIndex((r) => r.token === successor.token);
      assert.ok(
        unfenced.slice(firstNew).some((r) => r.token === oldToken && r.writer === old.identity),
        'without the fence the stale write lands after the successor’s',
      );
      process.stdout.write(
        `# fenced write: ${old.identity} (token ${oldToken}) stopped after its gate check; ` +
          `${next.identity} wrote with token ${successor.token} ${Math.round(successor.monotonicMs - stoppedAt)} ms later; ` +
          `on SIGCONT ${old.identity}'s write reached SQLite ${Math.round(refused.monotonicMs - wokeAt)} ms later and was refused: "${refused.error}"; ` +
          `ledger tokens ${JSON.stringify(tokens.filter((t, i) => i === 0 || t !== tokens[i - 1]))}, ` +
          `unfenced table: stale write landed after the successor's\n`,
      );
    },
  );
});
