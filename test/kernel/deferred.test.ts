// Deferred inserts (db/deferred.ts): on PostgreSQL a new row's insert travels with the next
// statement of its transaction. What a transaction sees and keeps must be as if every
// statement had gone on its own; on SQLite the same code runs each insert at once.

import { describe, expect, it } from 'vitest';
import { claimRecord, completeRecord, findRecord } from '../../src/db/idempotency.js';
import { sql, type Tx } from '../../src/db/index.js';
import { insertEvent } from '../../src/events/store.js';
import { newId } from '../../src/ids.js';
import { findCustomerRow } from '../../src/modules/customers/lookup.js';
import { build, databaseUrl } from '../helper.js';

function eventRow(platformId: string) {
  return {
    id: newId('Webhook'),
    platform_id: platformId,
    type: 'TEST',
    resource_id: platformId,
    data: '{"note":"it costs $1 and $2"}',
    created_at: new Date().toISOString(),
  };
}

describe('deferred inserts', () => {
  it('are seen by a later read of their table in the same transaction, and kept by the commit', async () => {
    const t = await build();
    const row = eventRow(t.platformId);
    const seen = await t.deps.db.transaction(async (tx) => {
      await insertEvent(tx, row);
      return tx.selectFrom('events').select(['id', 'data']).where('id', '=', row.id).executeTakeFirst();
    });
    expect(seen).toEqual({ id: row.id, data: row.data });
    const kept = await t.deps.db.k.selectFrom('events').select('id').where('id', '=', row.id).execute();
    expect(kept).toHaveLength(1);
  });

  it('travel with a statement of another table, whose placeholders and quoted text stay right', async () => {
    const t = await build();
    const first = eventRow(t.platformId);
    const second = eventRow(t.platformId);
    const answer = await t.deps.db.transaction(async (tx) => {
      await insertEvent(tx, first);
      await insertEvent(tx, second);
      const result = await sql<{
        quoted: string;
        given: string;
        name: string;
      }>`SELECT '$1 and $2' AS quoted, CAST(${'value'} AS TEXT) AS given, name FROM platforms WHERE id = ${t.platformId}`.execute(
        tx,
      );
      return result.rows[0];
    });
    expect(answer).toEqual({ quoted: '$1 and $2', given: 'value', name: expect.any(String) });
    const kept = await t.deps.db.k
      .selectFrom('events')
      .select(['id', 'data'])
      .where('id', 'in', [first.id, second.id])
      .orderBy('id')
      .execute();
    expect(kept).toEqual(
      [first, second].map((r) => ({ id: r.id, data: r.data })).sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it('are dropped with a transaction that rolls back', async () => {
    const t = await build();
    const row = eventRow(t.platformId);
    await expect(
      t.deps.db.transaction(async (tx) => {
        await insertEvent(tx, row);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    const kept = await t.deps.db.k.selectFrom('events').select('id').where('id', '=', row.id).execute();
    expect(kept).toHaveLength(0);
  });

  it('fail the transaction they travel in when they break a rule, and leave nothing behind', async () => {
    const t = await build();
    const row = eventRow(t.platformId);
    const twin = { ...eventRow(t.platformId), id: row.id };
    await expect(
      t.deps.db.transaction(async (tx) => {
        await insertEvent(tx, row);
        await insertEvent(tx, twin);
        await sql`SELECT 1 FROM platforms WHERE id = ${t.platformId}`.execute(tx);
      }),
    ).rejects.toThrow();
    const kept = await t.deps.db.k.selectFrom('events').select('id').where('id', '=', row.id).execute();
    expect(kept).toHaveLength(0);
    // The connection is usable afterwards.
    expect((await t.api('GET', '/config')).status).toBe(200);
  });

  it('fail the COMMIT they go with when they break a rule: the transaction fails and keeps nothing', async () => {
    const t = await build();
    const row = eventRow(t.platformId);
    const twin = { ...eventRow(t.platformId), id: row.id };
    // The last statements are deferred, so they reach the database together with the COMMIT,
    // which must then answer their error, never a success.
    await expect(
      t.deps.db.transaction(async (tx) => {
        await sql`SELECT 1 FROM platforms WHERE id = ${t.platformId}`.execute(tx);
        await insertEvent(tx, row);
        await insertEvent(tx, twin);
      }),
    ).rejects.toThrow();
    const kept = await t.deps.db.k.selectFrom('events').select('id').where('id', '=', row.id).execute();
    expect(kept).toHaveLength(0);
    expect((await t.api('GET', '/config')).status).toBe(200);
  });

  it('make a transaction of their own when nothing else runs in it, and a transaction of nothing commits', async () => {
    const t = await build();
    const row = eventRow(t.platformId);
    await t.deps.db.transaction(async (tx) => {
      await insertEvent(tx, row);
    });
    const kept = await t.deps.db.k.selectFrom('events').select('id').where('id', '=', row.id).execute();
    expect(kept).toHaveLength(1);
    expect(await t.deps.db.transaction(async () => 'nothing to do')).toBe('nothing to do');
    // A transaction whose first statement fails rolls back, and its connection serves the next one.
    await expect(
      t.deps.db.transaction(async (tx) => {
        await sql`SELECT no_such_column FROM platforms`.execute(tx);
      }),
    ).rejects.toThrow();
    expect((await t.api('GET', '/config')).status).toBe(200);
  });

  it("complete an idempotency key with the transaction's last statement, and not when it fails after", async () => {
    const t = await build();
    const now = new Date().toISOString();
    const kept = `deferred-${newId('Webhook')}`;
    const lost = `deferred-${newId('Webhook')}`;
    await t.deps.db.transaction(async (tx) => {
      expect(await claimRecord(tx, t.platformId, 'createTransferOut', kept, 'hash', now)).toBe(true);
      await completeRecord(tx, t.platformId, 'createTransferOut', kept, 201, '{"kept":true}');
    });
    await expect(
      t.deps.db.transaction(async (tx) => {
        expect(await claimRecord(tx, t.platformId, 'createTransferOut', lost, 'hash', now)).toBe(true);
        await completeRecord(tx, t.platformId, 'createTransferOut', lost, 201, '{"kept":false}');
        await sql`SELECT no_such_column FROM platforms`.execute(tx);
      }),
    ).rejects.toThrow();
    expect(await findRecord(t.deps.db.k, t.platformId, 'createTransferOut', kept)).toEqual({
      requestHash: 'hash',
      status: 201,
      body: '{"kept":true}',
    });
    expect(await findRecord(t.deps.db.k, t.platformId, 'createTransferOut', lost)).toBeUndefined();
  });

  it.skipIf(databaseUrl === undefined)(
    "refuse a transaction's queries once it has ended, rather than run them on a connection it gave back",
    async () => {
      const t = await build();
      let ended: Tx | undefined;
      await t.deps.db.transaction(async (tx) => {
        ended = tx;
        await findCustomerRow(tx, t.platformId, 'Customer:none');
      });
      await expect(findCustomerRow(ended!, t.platformId, 'Customer:none')).rejects.toThrow(/committed/);
    },
  );
});
