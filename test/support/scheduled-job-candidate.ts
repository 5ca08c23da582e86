/**
 * A candidate of the candidate harness ({@link CandidateProcess} with
 * `program: 'scheduled-job-app'`) that is a whole Nest application: `LeaderModule.forRoot()` on a real
 * Lease and one `@LeaderOnly({ catchUp })` `@Cron('* * * * * *')` job — a slot a second. Same
 * flags and JSON-lines events as `nest-leader-candidate.ts` (`ready`, `new-leader`, `started`,
 * `stopped`, `exit`, and `log` for each of Nest's log lines), plus `slot-begun` / `slot-done` /
 * `slot-refused` per run, and:
 *
 *   --catch-up skip|once|all   the job's catch-up policy (default skip)
 *   --db PATH                  the job's own record of side effects (SQLite, shared by the fleet)
 *   --job-ms N                 how long a run works between its start and its effect (default 300)
 *
 * Each run is recorded in `runs` beside the recipe's `effects` table (unfenced: every run that
 * began — slot, token, when it began, and when it completed or its effect was refused), works
 * `--job-ms`, then writes its effect the way the library's docs/schedule-ledger.md tells users to, in
 * one transaction: refused if a newer fencing token has written an effect (checked first, so a
 * woken stale leader is refused even for a slot its successor already redid; the insert trigger
 * of `examples/fenced-ledger.ts` too), else keyed by the slot (`currentSlot()`: job +
 * scheduledAt) and skipped if that slot already has one. Times in `runs`: `started_ms` wall
 * clock (to compare with the slot), `*_mono_ms` CLOCK_MONOTONIC (the harness's clock).
 * SIGTERM closes the application (drain, then release) and exits 0.
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { KubeConfig } from '@kubernetes/client-node';
import {
  type CatchUpPolicy,
  currentSlot,
  type LeaderTerm,
  LeaderModule,
  LeaderOnly,
  OnLeaderChanged,
  OnLeadershipAcquired,
  OnLeadershipLost,
} from 'nest-leader';
import type { CandidateEvent } from './candidate-process.js';
import { monotonicNowMs } from './monotonic-time.js';
import { CANDIDATE_FLAG_OPTIONS, timingsFromFlags } from './candidate-flags.js';

const { values } = parseArgs({
  options: {
    ...CANDIDATE_FLAG_OPTIONS,
    'catch-up': { type: 'string', default: 'skip' },
    db: { type: 'string' },
    'job-ms': { type: 'string', default: '300' },
  },
});
const identity = values.identity!;
const catchUp = values['catch-up'] as CatchUpPolicy;
const jobMs = Number(values['job-ms']);
if (!values['lease-name'] || !identity || !values.kubeconfig || !values.db) {
  throw new Error('--lease-name, --identity, --kubeconfig and --db are required');
}

function emit(event: CandidateEvent['event'], fields: Partial<CandidateEvent> = {}): void {
  const line = {
    event,
    identity,
    ...fields,
    monotonicMs: monotonicNowMs(),
    time: new Date().toISOString(),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** Opens the fleet's record of side effects (every process opens the same file). */
function openRecord(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec(`
    PRAGMA busy_timeout = 5000;
    PRAGMA journal_mode = WAL;
    CREATE TABLE IF NOT EXISTS runs (
      id INTEGER PRIMARY KEY,
      slot_ms INTEGER NOT NULL, token INTEGER NOT NULL, writer TEXT NOT NULL,
      started_ms INTEGER NOT NULL, started_mono_ms REAL NOT NULL,
      completed_mono_ms REAL, refused_mono_ms REAL
    );
    CREATE TABLE IF NOT EXISTS effects (
      slot_ms INTEGER NOT NULL, token INTEGER NOT NULL, writer TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS refusals (
      slot_ms INTEGER NOT NULL, token INTEGER NOT NULL, writer TEXT NOT NULL, error TEXT NOT NULL
    );
    CREATE TRIGGER IF NOT EXISTS effects_fence BEFORE INSERT ON effects
      WHEN NEW.token < (SELECT MAX(token) FROM effects)
      BEGIN SELECT RAISE(ABORT, 'stale fencing token'); END;
  `);
  return db;
}
const db = openRecord(values.db);

@Injectable()
class SlotJob {
  @LeaderOnly({ catchUp })
  @Cron('* * * * * *')
  async tick(): Promise<void> {
    const slot = currentSlot()!;
    const slotMs = slot.scheduledAt.getTime();
    const run = db
      .prepare(
        'INSERT INTO runs (slot_ms, token, writer, started_ms, started_mono_ms) VALUES (?, ?, ?, ?, ?)',
      )
      .run(slotMs, slot.token, identity, Date.now(), monotonicNowMs());
    emit('slot-begun', { slotMs, token: slot.token });
    await sleep(jobMs);
    // The effect, exactly once per slot: fenced by the token, keyed by the slot.
    try {
      db.exec('BEGIN IMMEDIATE');
      const { newest } = db.prepare('SELECT MAX(token) AS newest FROM effects').get() as {
        newest: number | null;
      };
      if (newest !== null && slot.token < newest) throw new Error('stale fencing token');
      const done = db.prepare('SELECT 1 FROM effects WHERE slot_ms = ?').get(slotMs);
      if (!done) {
        db.prepare('INSERT INTO effects (slot_ms, token, writer) VALUES (?, ?, ?)').run(
          slotMs,
          slot.token,
          identity,
        );
      }
      db.prepare('UPDATE runs SET completed_mono_ms = ? WHERE id = ?').run(
        monotonicNowMs(),
        run.lastInsertRowid,
      );
      db.exec('COMMIT');
      emit('slot-done', { slotMs, token: slot.token, alreadyDone: Boolean(done) });
    } catch (error) {
      db.exec('ROLLBACK');
      const message = (error as Error).message;
      db.prepare('UPDATE runs SET refused_mono_ms = ? WHERE id = ?').run(
        monotonicNowMs(),
        run.lastInsertRowid,
      );
      db.prepare('INSERT INTO refusals (slot_ms, token, writer, error) VALUES (?, ?, ?, ?)').run(
        slotMs,
        slot.token,
        identity,
        message,
      );
      emit('slot-refused', { slotMs, token: slot.token, error: message });
    }
  }

  @OnLeadershipAcquired()
  acquired(term: LeaderTerm): void {
    emit('started', { leaseTransitions: term.leaseTransitions });
  }

  @OnLeadershipLost()
  lost(term: LeaderTerm): void {
    emit('stopped', { leaseTransitions: term.leaseTransitions });
  }

  @OnLeaderChanged()
  changed(leader: string): void {
    emit('new-leader', { leader });
  }
}

const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(readFileSync(values.kubeconfig, 'utf8'));

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LeaderModule.forRoot({
      leaseName: values['lease-name'],
      namespace: values.namespace,
      identity,
      lock: 'kubernetes',
      kubeConfig,
      ...timingsFromFlags(values),
      releaseOnShutdown: values['release-on-cancel'] !== 'false',
      shutdownGraceMs: 5000,
    }),
  ],
  providers: [SlotJob],
})
class AppModule {}

emit('ready');
/** Nest's log lines (the library's included) as `log` events; debug and verbose left out. */
const log = (level: string) => (message: unknown) =>
  emit('log', { level, message: String(message) });
const app: INestApplicationContext = await NestFactory.createApplicationContext(AppModule, {
  logger: {
    log: log('info'),
    warn: log('warn'),
    error: log('error'),
    debug: () => undefined,
    verbose: () => undefined,
  },
});
await app.init();
process.once('SIGTERM', () => {
  void app.close().then(() => {
    emit('exit', { reason: 'signal' });
    process.exit(0);
  });
});
