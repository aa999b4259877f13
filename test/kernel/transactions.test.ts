// Database transactions as services use them: all or nothing each, isolated from each
// other, even when the embedded store groups them under shared commits.

import { describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/events/outbox.js';
import { build, databaseUrl } from '../helper.js';

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
    async () => {
      const { mkdtempSync, statSync } = await import('node:fs');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const dataDir = mkdtempSync(join(tmpdir(), 'railyard-wal-'));
      const t = await build({ config: { dataDir } });
      const now = new Date();
      const writeEvents = (prefix: string) =>
        Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            t.deps.db.transaction((tx) =>
              recordEvent(tx, {
                platformId: t.platformId,
                type: 'TEST',
                resourceId: `${prefix}-${i}`,
                data: { pad: 'x'.repeat(2000) },
                now,
              }),
            ),
          ),
        );
      const wal = join(dataDir, 'railyard.sqlite-wal');
      const main = join(dataDir, 'railyard.sqlite');
      await writeEvents('first');
      const walAfterFirst = statSync(wal).size;
      const mainBefore = statSync(main).size;
      expect(walAfterFirst).toBeGreaterThan(100_000);
      // The 100 kB of events reach the database file only through a checkpoint.
      for (let i = 0; i < 60 && statSync(main).size < mainBefore + 100_000; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(statSync(main).size).toBeGreaterThanOrEqual(mainBefore + 100_000);
      // The log's file is kept and written again from its start, not appended to.
      expect(statSync(wal).size).toBe(walAfterFirst);
      await writeEvents('second');
      expect(statSync(wal).size).toBeLessThanOrEqual(walAfterFirst);
      const rows = await t.deps.db.k.selectFrom('events').select('id').where('type', '=', 'TEST').execute();
      expect(rows).toHaveLength(100);
    },
  );
});
