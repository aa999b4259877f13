// The embedded store's checkpoints run on a thread of their own (db/checkpointer.ts), and one
// server at a time holds a data directory (db/sqlite-setup.ts).

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, openDb } from '../../src/db/index.js';
import { AUTOCHECKPOINT_PAGES } from '../../src/db/sqlite-setup.js';
import { readWal } from '../fixtures/wal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-checkpoint-'));
  dirs.push(dir);
  return dir;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The log's state, read from its index (the -shm file SQLite maps into memory) without
 * touching the store: frames in the log (mxFrame, in the index's header) and frames copied
 * into the database file (nBackfill, right after the header's two copies). Native byte order.
 */
function logState(dir: string): { frames: number; copied: number } {
  const index = readFileSync(join(dir, 'railyard.sqlite-shm'));
  const u32 = (offset: number) => (endianness() === 'LE' ? index.readUInt32LE(offset) : index.readUInt32BE(offset));
  return { frames: u32(16), copied: u32(96) };
}

async function count(db: Db): Promise<number> {
  const rows = await sql<{ n: number }>`SELECT count(*) AS n FROM probe`.execute(db.k);
  return rows.rows[0]!.n;
}

describe('the embedded store checkpoint thread', () => {
  it('copies the log into the database file while writes go on, and the log then restarts', {
    timeout: 90_000,
  }, async () => {
    const dir = dataDir();
    const db = await openDb({ dataDir: dir });
    const checkpointer = db.checkpointer!;
    expect(checkpointer).toBeDefined();
    await sql`CREATE TABLE probe (n INTEGER NOT NULL, pad BLOB NOT NULL)`.execute(db.k);
    const write = (n: number) =>
      db.transaction(async (tx) => {
        await sql`INSERT INTO probe (n, pad) VALUES (${n}, randomblob(2000))`.execute(tx);
      });
    let n = 0;
    for (const deadline = Date.now() + 30_000; checkpointer.checkpoints < 3 && Date.now() < deadline; ) {
      await write(n++);
      await pause(5);
    }
    expect(checkpointer.checkpoints).toBeGreaterThanOrEqual(3);
    // A write of a few hundred pages; once writes pause, the thread copies the whole log (the
    // server's connection checkpoints only past AUTOCHECKPOINT_PAGES, far above this) ...
    await db.transaction(async (tx) => {
      for (let i = 0; i < 300; i++) await sql`INSERT INTO probe (n, pad) VALUES (${n++}, randomblob(2000))`.execute(tx);
    });
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await pause(10)) {
      const state = logState(dir);
      if (state.copied === state.frames) break;
    }
    const idle = logState(dir);
    expect(idle.frames).toBeGreaterThan(100);
    expect(idle.frames).toBeLessThan(AUTOCHECKPOINT_PAGES);
    expect(idle.copied).toBe(idle.frames);
    // ... and the next write starts it over (a new header, test/fixtures/wal.ts), so it holds
    // only that write's pages. A write that begins in the instant the thread still ends its
    // copy appends instead: the test writes again a moment later, until one starts it over.
    const before = readWal(join(dir, 'railyard.sqlite-wal'))!;
    for (const deadline = Date.now() + 30_000; ; await pause(20)) {
      await write(n++);
      const now = readWal(join(dir, 'railyard.sqlite-wal'))!;
      if (now.salt1 !== before.salt1 || now.salt2 !== before.salt2) break;
      if (Date.now() > deadline) throw new Error('no write started the log over');
    }
    expect(logState(dir).frames).toBeLessThan(10);
    await db.close();
    const reopened = await openDb({ dataDir: dir });
    expect(await count(reopened)).toBe(n);
    await reopened.close();
  });

  it('sleeps while nothing is written, and wakes at the first write to copy it', async () => {
    const dir = dataDir();
    const db = await openDb({ dataDir: dir });
    const checkpointer = db.checkpointer!;
    await sql`CREATE TABLE probe (n INTEGER NOT NULL, pad BLOB NOT NULL)`.execute(db.k);
    // Idle: the thread stops looking once the log has stayed the same for a while.
    let looks = checkpointer.looks;
    for (const deadline = Date.now() + 30_000; ; ) {
      await pause(1500);
      if (checkpointer.looks === looks) break;
      looks = checkpointer.looks;
      if (Date.now() > deadline) throw new Error('the checkpoint thread kept looking at an idle store');
    }
    await pause(1500);
    expect(checkpointer.looks).toBe(looks);
    // A write wakes it: it copies the write into the database file.
    const copied = checkpointer.checkpoints;
    await db.transaction(async (tx) => {
      for (let i = 0; i < 50; i++) await sql`INSERT INTO probe (n, pad) VALUES (${i}, randomblob(2000))`.execute(tx);
    });
    for (const deadline = Date.now() + 30_000; ; await pause(20)) {
      const state = logState(dir);
      if (checkpointer.checkpoints > copied && state.copied === state.frames) break;
      if (Date.now() > deadline) throw new Error('the checkpoint thread did not wake for a write');
    }
    expect(checkpointer.looks).toBeGreaterThan(looks);
    expect(logState(dir).frames).toBeGreaterThan(0);
    await db.close();
  }, 90_000);

  it('keeps the log bounded under writes that never pause', async () => {
    const dir = dataDir();
    const db = await openDb({ dataDir: dir });
    await sql`CREATE TABLE probe (n INTEGER NOT NULL, pad BLOB NOT NULL)`.execute(db.k);
    // About twice the automatic checkpoint's bound in pages, written back to back: groups of
    // transactions started together, so the store is never idle between them.
    const rows = AUTOCHECKPOINT_PAGES * 2;
    const perGroup = 50;
    let n = 0;
    while (n < rows) {
      const group: Promise<void>[] = [];
      for (let i = 0; i < perGroup; i++) {
        const value = n++;
        group.push(
          db.transaction(async (tx) => {
            await sql`INSERT INTO probe (n, pad) VALUES (${value}, randomblob(3000))`.execute(tx);
          }),
        );
      }
      await Promise.all(group);
    }
    // The log restarted on the way: it never held all the pages written (a page a row at
    // least). How far past the bound it gets depends on the machine: the server's checkpoint
    // gives way while the thread's runs, and commits go on meanwhile.
    const pageSize = 4096;
    expect(logState(dir).frames).toBeLessThan(rows);
    expect(statSync(join(dir, 'railyard.sqlite-wal')).size).toBeLessThan(rows * (pageSize + 24));
    expect(await count(db)).toBe(rows);
    await db.close();
  }, 60_000);

  it('is not made for a store in memory', async () => {
    const db = await openDb({ dataDir: ':memory:' });
    expect(db.checkpointer).toBeUndefined();
    await db.close();
  });
});

describe('the data directory lock', () => {
  it('refuses a second store on the same directory until the first is closed', async () => {
    const dir = dataDir();
    const first = await openDb({ dataDir: dir });
    await sql`CREATE TABLE probe (n INTEGER NOT NULL, pad BLOB NOT NULL)`.execute(first.k);
    await sql`INSERT INTO probe (n, pad) VALUES (1, x'00')`.execute(first.k);
    await expect(openDb({ dataDir: dir })).rejects.toThrow(/database is locked/);
    // The refused attempt changed nothing for the first.
    expect(await count(first)).toBe(1);
    await first.close();
    const second = await openDb({ dataDir: dir });
    expect(await count(second)).toBe(1);
    await second.close();
  });
});
