// The platform's row is read once per transaction, on both stores: the embedded store's
// transactions are turns of the group commit on one shared connection, and each turn has a
// memo of its own.

import { describe, expect, it } from 'vitest';
import { forgetPlatformCore, platformCore } from '../../src/db/platform-row.js';
import { build } from '../helper.js';

describe('platformCore', () => {
  it('reads once per transaction, again after a write, and never from another transaction', async () => {
    const t = await build();
    const db = t.deps.db;
    const [first, second] = await Promise.all([
      db.transaction(async (tx) => {
        const a = await platformCore(tx, t.platformId);
        const b = await platformCore(tx, t.platformId);
        expect(b).toBe(a); // the same object: no second read
        forgetPlatformCore(tx);
        const c = await platformCore(tx, t.platformId);
        expect(c).not.toBe(a);
        expect(c).toEqual(a);
        return c;
      }),
      // Queued beside the first: on SQLite the same batch, on the same connection.
      db.transaction(async (tx) => platformCore(tx, t.platformId)),
    ]);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
    // Outside a transaction nothing is kept.
    const outside = await platformCore(db.k, t.platformId);
    expect(await platformCore(db.k, t.platformId)).not.toBe(outside);
  });
});
