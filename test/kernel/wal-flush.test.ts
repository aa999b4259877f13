// The embedded store writes its log to disk as it grows, from the thread pool (db/wal-flush.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/index.js';

describe('the embedded store log flusher', () => {
  it('syncs the log while writes go on, stops when they stop, and closes cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-wal-flush-'));
    try {
      const db = await openDb({ dataDir: dir });
      const flusher = db.logFlusher!;
      expect(flusher).toBeDefined();
      await sql`CREATE TABLE flush_probe (n INTEGER NOT NULL)`.execute(db.k);
      const write = (n: number) =>
        db.transaction(async (tx) => {
          await sql`INSERT INTO flush_probe (n) VALUES (${n})`.execute(tx);
        });
      // Writes keep coming until the flusher has synced the log at least twice.
      let n = 0;
      for (const deadline = Date.now() + 10_000; flusher.flushes < 2 && Date.now() < deadline; ) {
        await write(n++);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(flusher.flushes).toBeGreaterThanOrEqual(2);
      // Nothing written: no new sync starts (the one in flight, if any, still completes).
      await new Promise((resolve) => setTimeout(resolve, 100));
      const settled = flusher.flushes;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(flusher.flushes - settled).toBeLessThanOrEqual(1);
      // Closing with writes just made (a sync may be in flight) neither throws nor loses rows.
      await write(n++);
      await db.close();
      const reopened = await openDb({ dataDir: dir });
      const rows = await sql<{ count: number }>`SELECT count(*) AS count FROM flush_probe`.execute(reopened.k);
      expect(rows.rows[0]!.count).toBe(n);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is not made for a store in memory', async () => {
    const db = await openDb({ dataDir: ':memory:' });
    expect(db.logFlusher).toBeUndefined();
    await db.close();
  });
});
