// How the embedded store's file is opened: its settings, and the lock that keeps a second
// server off the same data directory. railyard's store (index.ts) and the bench's floor
// (bench/floor.ts) both use these, so the floor measures the same storage.

import type SQLite from 'better-sqlite3';

/**
 * The automatic checkpoint's bound on the server's connection, in pages (~64 MB). The
 * checkpoint thread (checkpointer.ts) does the copying; this bound only matters when writes
 * never pause long enough for the log to restart.
 */
export const AUTOCHECKPOINT_PAGES = 16_000;

/** How much of the write-ahead log's file a restart keeps for the next writes. */
const WAL_KEPT_BYTES = 64 * 1024 * 1024;

/** Applies the embedded store's settings to a connection on its file. */
export function applyStoreSettings(database: SQLite.Database): void {
  database.pragma('journal_mode = WAL');
  // WAL with synchronous=NORMAL keeps every committed transaction across a process crash
  // (kill -9); only an operating-system crash can lose the last few.
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // Savepoint and statement journals in memory, not in temporary files.
  database.pragma('temp_store = MEMORY');
  database.pragma('cache_size = -16000');
  database.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  // A checkpoint restarts the log from its start but keeps up to this much of the file:
  // writing over blocks the file already has costs less than growing it (about 7% of a
  // transfer's time under load), and the file stays bounded when idle.
  database.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
  database.pragma('busy_timeout = 5000');
}

/**
 * Takes the data directory for this process: an exclusive lock on `lockFile` (an SQLite
 * file of its own, kept open in a transaction that never ends), held until the returned
 * connection is closed. The store's file cannot carry it: the checkpoint thread needs the
 * store's file shared. Throws SQLite's "database is locked" when another process holds it.
 */
export function holdDataDirectory(Driver: typeof SQLite, lockFile: string): SQLite.Database {
  const lock = new Driver(lockFile);
  try {
    lock.pragma('busy_timeout = 0');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    throw err;
  }
  return lock;
}
