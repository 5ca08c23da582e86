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
 * Each run records an attempt (unfenced: every run that started), works `--job-ms`, then writes
 * its effect the way the README's "Schedule ledger" tells users to: keyed by the slot
 * (`currentSlot()`: job + scheduledAt), skipped if that slot already has one, refused by the
 * database if a newer fencing token has written (`examples/fenced-ledger.ts`'s trigger).
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
    CREATE TABLE IF NOT EXISTS attempts (
      slot_ms INTEGER NOT NULL, token INTEGER NOT NULL, writer TEXT NOT NULL,
      started_ms INTEGER NOT NULL
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
    db.prepare('INSERT INTO attempts (slot_ms, token, writer, started_ms) VALUES (?, ?, ?, ?)').run(
      slotMs,
      slot.token,
      identity,
      Date.now(),
    );
    emit('slot-begun', { slotMs, token: slot.token });
    await sleep(jobMs);
    // The effect, exactly once per slot: keyed by the slot, fenced by the token.
    try {
      db.exec('BEGIN IMMEDIATE');
      const done = db.prepare('SELECT 1 FROM effects WHERE slot_ms = ?').get(slotMs);
      if (!done) {
        db.prepare('INSERT INTO effects (slot_ms, token, writer) VALUES (?, ?, ?)').run(
          slotMs,
          slot.token,
          identity,
        );
      }
      db.exec('COMMIT');
      emit('slot-done', { slotMs, token: slot.token, alreadyDone: Boolean(done) });
    } catch (error) {
      db.exec('ROLLBACK');
      const message = (error as Error).message;
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
