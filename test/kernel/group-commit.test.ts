// The embedded store's group commit: transactions that wait together share one COMMIT, and
// each keeps its own all-or-nothing outcome.

import { describe, expect, it } from 'vitest';
import { BACKGROUND_EVERY, BATCH_ALONE_DURATION_MAX_MS } from '../../src/db/group-commit.js';
import { recordEvent } from '../../src/events/outbox.js';
import { build, databaseUrl } from '../helper.js';

describe.skipIf(databaseUrl !== undefined)('Db.transaction on the embedded store', () => {
  it('commits each of a burst of transactions, and rolls back only the one that throws', async () => {
    const t = await build();
    const now = new Date(0);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        t.deps.db.transaction(async (tx) => {
          await recordEvent(tx, { platformId: t.platformId, type: 'TEST', resourceId: `burst-${i}`, data: { i }, now });
          if (i % 7 === 3) throw new Error(`item ${i} fails after writing`);
          await recordEvent(tx, {
            platformId: t.platformId,
            type: 'TEST',
            resourceId: `burst-${i}`,
            data: { i, second: true },
            now,
          });
          return i;
        }),
      ),
    );
    const rows = await t.deps.db.k.selectFrom('events').select('resource_id').where('type', '=', 'TEST').execute();
    const count = (i: number) => rows.filter((r) => r.resource_id === `burst-${i}`).length;
    outcomes.forEach((outcome, i) => {
      if (i % 7 === 3) {
        expect(outcome).toEqual({ status: 'rejected', reason: new Error(`item ${i} fails after writing`) });
        expect(count(i)).toBe(0);
      } else {
        expect(outcome).toEqual({ status: 'fulfilled', value: i });
        expect(count(i)).toBe(2);
      }
    });
    expect(rows.length).toBe(2 * 34);
  });

  it('runs waiting requests before background bookkeeping, and still commits every background transaction', async () => {
    const t = await build();
    const order: string[] = [];
    const run = (name: string, background: boolean) =>
      t.deps.db.transaction(
        async () => {
          order.push(name);
          return name;
        },
        { background },
      );
    // Queued in the same turn: the background ones first, then the requests.
    const all = [
      ...Array.from({ length: 100 }, (_, i) => run(`b${i}`, true)),
      ...Array.from({ length: 100 }, (_, i) => run(`r${i}`, false)),
    ];
    expect(await Promise.all(all)).toEqual([
      ...Array.from({ length: 100 }, (_, i) => `b${i}`),
      ...Array.from({ length: 100 }, (_, i) => `r${i}`),
    ]);
    expect(order).toHaveLength(200);
    // Queued behind the background ones, the requests still get their places at once: one
    // pick in BACKGROUND_EVERY goes to background work while both wait, the rest to requests.
    const first = order.slice(0, 16 * BACKGROUND_EVERY);
    expect(first.filter((name) => name.startsWith('b')).length).toBe(16);
    expect(first.filter((name) => name.startsWith('r')).length).toBe(16 * (BACKGROUND_EVERY - 1));
    expect(order.filter((name) => name.startsWith('r'))).toEqual(Array.from({ length: 100 }, (_, i) => `r${i}`));
    expect(order.filter((name) => name.startsWith('b'))).toEqual(Array.from({ length: 100 }, (_, i) => `b${i}`));
  });

  it('answers a lone request without waiting for the bookkeeping queued with it', async () => {
    const t = await build();
    const ran: string[] = [];
    // Each background transaction holds the loop for a millisecond at least (as a job would).
    const busy = (name: string) => async () => {
      ran.push(name);
      const until = performance.now() + 1;
      while (performance.now() < until) {
        // spin
      }
      return name;
    };
    const background = Array.from({ length: 60 }, (_, i) => t.deps.db.transaction(busy(`b${i}`), { background: true }));
    let ranWhenAnswered = -1;
    const request = t.deps.db.transaction(busy('r')).then((name) => {
      ranWhenAnswered = ran.length;
      return name;
    });
    expect(await request).toBe('r');
    await Promise.all(background);
    // The request's batch stops taking bookkeeping once it has run BATCH_ALONE_DURATION_MAX_MS
    // (no other request waits), so the request's COMMIT comes after a few of them, not dozens.
    // (The request is the first or second pick: one pick in BACKGROUND_EVERY goes to bookkeeping.)
    expect(ran.indexOf('r')).toBeLessThan(BACKGROUND_EVERY);
    expect(ranWhenAnswered).toBeGreaterThanOrEqual(1);
    expect(ranWhenAnswered).toBeLessThanOrEqual(BATCH_ALONE_DURATION_MAX_MS + 2);
    expect(ran).toHaveLength(61);
  });
});
