/**
 * The fencing token end to end (the Kleppmann scenario a lease alone cannot prevent): two
 * writer processes on one Lease write to one real SQLite database (node:sqlite) with their
 * term's leaseTransitions. The leader is SIGSTOPped after its gate check and before its write;
 * the other takes over and writes with a newer token; when the old leader wakes, its write
 * reaches the database and the database refuses it. The same write to an unfenced table lands.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DatabaseSync } from 'node:sqlite';
import { getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { repoRoot } from '../support/control-plane.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const WRITER = join(repoRoot, 'test/dist/support/fenced-writer.main.js');
const leaseDurationMs = FAST_TIMINGS.leaseDurationSeconds * 1000;

interface WriterEvent {
  event: string;
  identity: string;
  token?: number;
  entry?: string;
  error?: string;
  atMs: number;
}

class Writer {
  readonly events: WriterEvent[] = [];
  readonly stderr: string[] = [];
  readonly child: ChildProcess;
  private waiters: (() => void)[] = [];

  constructor(
    readonly identity: string,
    db: string,
    readonly pauseFile: string,
    leaseName: string,
  ) {
    this.child = spawn(
      process.execPath,
      [
        WRITER,
        ...['--name', leaseName, '--namespace', cluster.namespace, '--identity', identity],
        ...['--db', db, '--pause-file', pauseFile],
      ],
      {
        env: {
          ...process.env,
          KUBECONFIG: cluster.identities[identity]!.kubeconfigPath,
          NODE_NO_WARNINGS: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.events.push({ ...(JSON.parse(line) as WriterEvent), atMs: performance.now() });
      for (const wake of this.waiters.splice(0)) wake();
    });
    createInterface({ input: this.child.stderr! }).on('line', (line) => this.stderr.push(line));
  }

  async waitFor(predicate: (e: WriterEvent) => boolean, timeoutMs: number): Promise<WriterEvent> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(predicate);
      if (found) return found;
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new Error(
          `${this.identity}: no matching event in ${timeoutMs} ms\n${this.describe()}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  describe(): string {
    return `${this.events.map((e) => `${e.event}:${e.token ?? ''}`).join(' ')}\n${this.stderr.slice(-5).join('\n')}`;
  }

  /** `T` while stopped, as /proc/<pid>/stat reports it. */
  processState(): string {
    const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
  }
}

describe('fenced write to a real database: a paused leader is refused by the database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fenced-'));
  const dbPath = join(dir, 'ledger.db');
  const leaseName = uniqueLeaseName('fenced');
  const writers: Writer[] = [];

  before(async () => {
    await grantLeaseAccess(cluster, 'alice');
    await grantLeaseAccess(cluster, 'bob');
  });
  after(async () => {
    for (const w of writers) {
      w.child.kill('SIGCONT');
      w.child.kill('SIGKILL');
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
      for (const identity of ['alice', 'bob']) {
        writers.push(new Writer(identity, dbPath, join(dir, `pause-${identity}`), leaseName));
      }
      const firstWrite = await Promise.any(
        writers.map((w) => w.waitFor((e) => e.event === 'write-accepted', 3 * leaseDurationMs)),
      );
      const old = writers.find((w) => w.identity === firstWrite.identity)!;
      const next = writers.find((w) => w !== old)!;
      const oldToken = firstWrite.token!;

      // Pause the leader inside the window between its gate check and its write.
      writeFileSync(old.pauseFile, '');
      const window = await old.waitFor((e) => e.event === 'write-window', 5000);
      old.child.kill('SIGSTOP');
      const stoppedAt = performance.now();
      assert.equal(window.token, oldToken);
      // Signal delivery is asynchronous: wait until the kernel reports it stopped.
      await eventually(() => assert.equal(old.processState(), 'T', 'the old leader is stopped'), {
        timeoutMs: 1000,
        intervalMs: 5,
      });
      assert.ok(
        !old.events.some((e) => e.event === 'write-accepted' && e.atMs > window.atMs),
        'stopped inside its window, before its write',
      );
      rmSync(old.pauseFile);

      // The other writer takes over (after leaseDuration) and writes with a newer token.
      const successor = await next.waitFor(
        (e) => e.event === 'write-accepted' && e.atMs > stoppedAt,
        leaseDurationMs + 5000,
      );
      assert.ok(successor.token! > oldToken, `newer token ${successor.token} > ${oldToken}`);
      assert.ok(
        !old.events.some(
          (e) => e.event.startsWith('write-') && e.event !== 'write-window' && e.atMs > stoppedAt,
        ),
        'the old leader wrote nothing while stopped',
      );

      // Wake it: it continues from between its gate check and its write.
      const wokeAt = performance.now();
      old.child.kill('SIGCONT');
      const refused = await old.waitFor(
        (e) => e.event === 'write-rejected' && e.atMs > wokeAt,
        5000,
      );
      assert.equal(refused.token, oldToken);
      assert.match(refused.error!, /stale fencing token/);

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
          `${next.identity} wrote with token ${successor.token} ${Math.round(successor.atMs - stoppedAt)} ms later; ` +
          `on SIGCONT ${old.identity}'s write reached SQLite ${Math.round(refused.atMs - wokeAt)} ms later and was refused: "${refused.error}"; ` +
          `ledger tokens ${JSON.stringify(tokens.filter((t, i) => i === 0 || t !== tokens[i - 1]))}, ` +
          `unfenced table: stale write landed after the successor's\n`,
      );
    },
  );
});
