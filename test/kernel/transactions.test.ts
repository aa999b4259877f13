// Database transactions as services use them: all or nothing each, isolated from each
// other, even when the embedded store groups them under shared commits.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/events/outbox.js';
import { readWal, type WalState, walHolds } from '../fixtures/wal.js';
import { build, databaseUrl } from '../helper.js';
import { until } from '../fixtures/until.js';

describe('db.transaction', () => {
  it('keeps each of many concurrent transactions all-or-nothing', async () => {
    const t = await build();
    const now = new Date();
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        t.deps.db.transaction(async (tx) => {
          await recordEvent(tx, { platformId: t.platformId, type: 'TEST', resourceId: `tx-${i}-a`, data: {}, now });
          await new Promise((r) => setTimeout(r, i % 3));
          await recordEvent(tx, { platformId: t.platformId, type: 'TEST', resourceId: `tx-${i}-b`, data: {}, now });
          if (i % 4 === 0) throw new Error(`refused ${i}`);
          return i;
        }),
      ),
    );
    const rows = await t.deps.db.k.selectFrom('events').select('resource_id').where('type', '=', 'TEST').execute();
    const written = new Set(rows.map((r) => r.resource_id));
    results.forEach((result, i) => {
      if (i % 4 === 0) {
        expect(result).toEqual({ status: 'rejected', reason: new Error(`refused ${i}`) });
        expect(written.has(`tx-${i}-a`)).toBe(false);
        expect(written.has(`tx-${i}-b`)).toBe(false);
      } else {
        expect(result).toEqual({ status: 'fulfilled', value: i });
        expect(written.has(`tx-${i}-a`) && written.has(`tx-${i}-b`)).toBe(true);
      }
    });
    expect(written.size).toBe(90);
  });

  // PostgreSQL runs them concurrently at READ COMMITTED; services lock rows where it matters.
  it.skipIf(databaseUrl !== undefined)(
    'runs embedded-store transactions one after another, each seeing the ones before',
    async () => {
      const t = await build();
      const now = new Date();
      const seen = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t.deps.db.transaction(async (tx) => {
            const before = await tx.selectFrom('events').select('id').where('resource_id', 'like', 'c-%').execute();
            await recordEvent(tx, { platformId: t.platformId, type: 'TEST', resourceId: `c-${i}`, data: {}, now });
            return before.length;
          }),
        ),
      );
      // Serial order: every transaction saw a different count, 0 through 9.
      expect([...seen].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    },
  );
});

describe('the embedded store', () => {
  it.skipIf(databaseUrl !== undefined)(
    'copies the write-ahead log back into the database once writes pause, then writes the log from its start again',
    { timeout: 90_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'railyard-wal-'));
      try {
        const t = await build({ config: { dataDir } });
        const now = new Date();
        const run = randomUUID();
        const writeEvent = (resourceId: string) =>
          t.deps.db.transaction((tx) =>
            recordEvent(tx, {
              platformId: t.platformId,
              type: 'TEST',
              resourceId,
              data: { pad: 'x'.repeat(2000) },
              now,
            }),
          );
        const wal = join(dataDir, 'railyard.sqlite-wal');
        const main = join(dataDir, 'railyard.sqlite');
        const first = Array.from({ length: 50 }, (_, i) => `first-${run}-${i}`);
        await Promise.all(first.map(writeEvent));
        const walAfterFirst = statSync(wal).size;
        const before = readWal(wal)!;
        expect(walHolds(before, first[49]!)).toBe(true);
        // The events reach the database file only through a checkpoint (the thread's: the
        // server's connection checkpoints only past a bound far above this).
        const inMain = () => {
          const file = readFileSync(main);
          return first.every((id) => file.includes(id));
        };
        await until('the first events in the database file', inMain);
        // Once the whole log is copied, the next write starts it over from its beginning: a
        // new header (new salts), whose first frames hold that write. A write that begins in
        // the instant the thread still finishes its copy appends instead, so the test writes
        // again, a moment later each time, until one starts the log over.
        let restarted: { marker: string; state: WalState } | undefined;
        const written: string[] = [];
        await until('a write that starts the log over', async () => {
          const marker = `after-${run}-${written.length}`;
          await writeEvent(marker);
          written.push(marker);
          const state = readWal(wal)!;
          if (state.salt1 !== before.salt1 || state.salt2 !== before.salt2) restarted = { marker, state };
          return restarted !== undefined;
        });
        expect(restarted!.state.sequence).not.toBe(before.sequence);
        // The log, valid from its first frame on under the new header, holds the write that
        // started it over.
        expect(walHolds(restarted!.state, restarted!.marker)).toBe(true);
        // The file is kept for the next writes, not cut back.
        expect(statSync(wal).size).toBeGreaterThanOrEqual(walAfterFirst);
        const rows = await t.deps.db.k.selectFrom('events').select('id').where('type', '=', 'TEST').execute();
        expect(rows).toHaveLength(first.length + written.length);
        await t.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
