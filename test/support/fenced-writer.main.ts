/**
 * A leader that writes to a real SQLite database (node:sqlite) with its term's fencing token,
 * using the README's `examples/fenced-ledger.ts`: every 250 ms, if the gate says it leads, it
 * announces `gate-passed` and writes. When its `--pause-file` exists it waits 5 s between the
 * gate and the write (`write-window`): the window in which the test SIGSTOPs it. Each write
 * also goes to an unfenced table, to show what a lease alone lets through.
 *
 * Usage: node fenced-writer.main.js --name N --namespace NS --identity ID --db PATH
 *          --pause-file PATH   (KUBECONFIG in env; FAST timings)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector, LeaseLock } from 'nest-leader';
import type { DatabaseSync } from 'node:sqlite';
import { FAST_TIMINGS } from './candidates.js';
import { repoRoot } from './control-plane.js';

interface FencedLedgerModule {
  openFencedLedger(path: string): DatabaseSync;
  fencedWrite(db: DatabaseSync, token: number, writer: string, entry: string): void;
}

const { values } = parseArgs({
  options: {
    name: { type: 'string' },
    namespace: { type: 'string' },
    identity: { type: 'string' },
    db: { type: 'string' },
    'pause-file': { type: 'string' },
  },
});
const identity = values.identity!;
const emit = (event: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ event, identity, ...fields })}\n`);

const ledger = (await import(
  pathToFileURL(join(repoRoot, 'packages/nest-leader/build/examples/fenced-ledger.js')).href
)) as FencedLedgerModule;
const db = ledger.openFencedLedger(values.db!);
db.exec('CREATE TABLE IF NOT EXISTS unfenced (id INTEGER PRIMARY KEY, token INTEGER, writer TEXT)');

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const log = (message: string) => process.stderr.write(`${new Date().toISOString()} ${message}\n`);
const elector = new LeaderElector({
  lock: new LeaseLock({ kubeConfig, name: values.name!, namespace: values.namespace!, identity }),
  identity,
  ...FAST_TIMINGS,
  logger: { debug: () => undefined, info: log, warn: log, error: log },
  callbacks: {
    onStartedLeading: (term) => emit('started-leading', { token: term.leaseTransitions }),
  },
});
elector.start();
emit('campaigning');

let sequence = 0;
for (;;) {
  await sleep(250);
  const term = elector.term; // the gate: live by the local clock, re-checked now
  if (!term) continue;
  const token = term.leaseTransitions;
  emit('gate-passed', { token });
  if (existsSync(values['pause-file']!)) {
    emit('write-window', { token, pid: process.pid });
    // Long enough that a test slowed by a loaded machine still stops us before the write:
    // stopped inside an INSERT, we would hold SQLite's write lock and block the successor.
    await sleep(5000);
  }
  const entry = `${identity}#${++sequence}`;
  db.prepare('INSERT INTO unfenced (token, writer) VALUES (?, ?)').run(token, identity);
  try {
    ledger.fencedWrite(db, token, identity, entry);
    emit('write-accepted', { token, entry });
  } catch (error) {
    emit('write-rejected', { token, entry, error: (error as Error).message });
  }
}
