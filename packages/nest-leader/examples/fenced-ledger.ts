import { DatabaseSync } from 'node:sqlite';

/**
 * A ledger whose writes carry the writer's fencing token (the term's leaseTransitions). The
 * database itself refuses a write whose token is older than the newest it has accepted, so a
 * stale leader that wakes up after a pause cannot write over its successor.
 */
export function openFencedLedger(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  // busy_timeout first: switching to WAL needs a moment of exclusive access, and another
  // process may be opening the same file.
  db.exec(`
    PRAGMA busy_timeout = 5000;
    PRAGMA journal_mode = WAL;
    CREATE TABLE IF NOT EXISTS ledger (
      id INTEGER PRIMARY KEY,
      token INTEGER NOT NULL,
      writer TEXT NOT NULL,
      entry TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS ledger_token ON ledger (token);
    CREATE TRIGGER IF NOT EXISTS ledger_fence BEFORE INSERT ON ledger
      WHEN NEW.token < (SELECT MAX(token) FROM ledger)
      BEGIN SELECT RAISE(ABORT, 'stale fencing token'); END;
  `);
  return db;
}

/**
 * Appends `entry` under `token`.
 * @throws Error `stale fencing token` (from SQLite) when a newer token has written.
 */
export function fencedWrite(db: DatabaseSync, token: number, writer: string, entry: string): void {
  db.prepare('INSERT INTO ledger (token, writer, entry) VALUES (?, ?, ?)').run(
    token,
    writer,
    entry,
  );
}
