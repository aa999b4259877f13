// What runs when a transaction ends: the callbacks registered for its commit, or those for
// its rollback, never both, once each, on both stores (the embedded store's transactions are
// parts of a shared commit; see group-commit.ts).

import { describe, expect, it } from 'vitest';
import { afterCommit, afterRollback } from '../../src/db/index.js';
import { recordEvent } from '../../src/events/outbox.js';
import { build, databaseUrl } from '../helper.js';

describe('the end of a transaction', () => {
  it('runs the commit callbacks of each transaction that commits, and the rollback ones of each that throws', async () => {
    const t = await build();
    const ended: string[] = [];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        t.deps.db.transaction(async (tx) => {
          afterCommit(tx, () => ended.push(`committed ${i}`));
          afterRollback(tx, () => ended.push(`rolled back ${i}`));
          await recordEvent(tx, {
            platformId: t.platformId,
            type: 'TEST',
            resourceId: `ending-${i}`,
            data: { i },
            now: new Date(0),
          });
          if (i % 5 === 2) throw new Error(`item ${i} fails`);
          return i;
        }),
      ),
    );
    const expected = outcomes.map((outcome, i) => {
      expect(outcome.status).toBe(i % 5 === 2 ? 'rejected' : 'fulfilled');
      return i % 5 === 2 ? `rolled back ${i}` : `committed ${i}`;
    });
    expect([...ended].sort()).toEqual([...expected].sort());
    const rows = await t.deps.db.k.selectFrom('events').select('resource_id').where('type', '=', 'TEST').execute();
    expect(rows).toHaveLength(24);
  });

  it.skipIf(databaseUrl === undefined)(
    'runs the rollback callbacks of an attempt that is retried, then the commit ones of the retry',
    async () => {
      const t = await build();
      const ended: string[] = [];
      let attempt = 0;
      const value = await t.deps.db.transaction(async (tx) => {
        const mine = ++attempt;
        afterCommit(tx, () => ended.push(`committed ${mine}`));
        afterRollback(tx, () => ended.push(`rolled back ${mine}`));
        if (mine === 1) throw Object.assign(new Error('deadlock detected (injected by the test)'), { code: '40P01' });
        return mine;
      });
      expect(value).toBe(2);
      expect(ended).toEqual(['rolled back 1', 'committed 2']);
    },
  );
});
