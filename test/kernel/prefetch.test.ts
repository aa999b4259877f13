// Prefetched reads (db/prefetch.ts): on PostgreSQL several reads named in advance go in one
// statement (with the idempotency key's claim in front when there is one), and each read then
// takes its row from there. What the reads answer must be what they answer on their own,
// value types included; on SQLite nothing is prefetched and the same code reads as usual.

import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { claimRecord, findRecord } from '../../src/db/idempotency.js';
import { onPostgres, type Queryable, sql } from '../../src/db/index.js';
import { platformCore, platformCoreRead } from '../../src/db/platform-row.js';
import { prefetch } from '../../src/db/prefetch.js';
import { externalAccountRead, findExternalAccount } from '../../src/modules/external-accounts/store.js';
import { findInternalAccount, internalAccountRead } from '../../src/modules/internal-accounts/store.js';
import { externalAccount, fundedUsd } from '../fixtures/money.js';
import { build, databaseUrl, type TestApp } from '../helper.js';

async function readAll(q: Queryable, t: TestApp, internalId: string, externalId: string) {
  return {
    internal: await findInternalAccount(q, t.platformId, internalId),
    external: await findExternalAccount(q, t.platformId, externalId, 'any', true),
    missing: await findExternalAccount(q, t.platformId, 'ExternalAccount:none', 'any', true),
    platform: await platformCore(q, t.platformId),
  };
}

function readsOf(t: TestApp, internalId: string, externalId: string) {
  return [
    internalAccountRead(t.platformId, internalId),
    externalAccountRead(t.platformId, externalId, true),
    externalAccountRead(t.platformId, 'ExternalAccount:none', true),
    platformCoreRead(t.platformId),
  ];
}

/** The statements sent to PostgreSQL while `fn` runs. */
/** The pg client a transaction runs on: the one that answers a first statement through it. */
async function clientOf(tx: Queryable): Promise<pg.Client> {
  let client: pg.Client | undefined;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    client ??= this;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await sql`SELECT 1`.execute(tx);
  } finally {
    pg.Client.prototype.query = original;
  }
  return client!;
}

/**
 * The statements `fn` sends on `client` (the transaction's connection): the store's other
 * users in this process (the request journal's writes, notifications) are not counted.
 */
async function counted<T>(client: pg.Client, fn: () => Promise<T>): Promise<{ value: T; statements: number }> {
  let statements = 0;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (this === client) statements++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { value: await fn(), statements };
  } finally {
    pg.Client.prototype.query = original;
  }
}

describe('prefetched reads', () => {
  it('answer what the reads answer on their own, a missing row included', async () => {
    const t = await build();
    const internal = await fundedUsd(t);
    const external = await externalAccount(t, 'USD_ACCOUNT');
    const alone = await t.deps.db.transaction((tx) => readAll(tx, t, internal.id, external.id));
    expect(alone.internal?.id).toBe(internal.id);
    expect(alone.external?.id).toBe(external.id);
    expect(alone.missing).toBeUndefined();
    const prefetched = await t.deps.db.transaction(async (tx) => {
      await prefetch(tx, readsOf(t, internal.id, external.id));
      return readAll(tx, t, internal.id, external.id);
    });
    expect(prefetched).toStrictEqual(alone);
  });

  it('travel with the key claim, which claims once', async () => {
    const t = await build();
    const internal = await fundedUsd(t);
    const external = await externalAccount(t, 'USD_ACCOUNT');
    const alone = await t.deps.db.transaction((tx) => readAll(tx, t, internal.id, external.id));
    const claim = (tx: Queryable) =>
      claimRecord(
        tx,
        t.platformId,
        'test',
        'k1',
        'hash',
        new Date().toISOString(),
        readsOf(t, internal.id, external.id),
      );
    const first = await t.deps.db.transaction(async (tx) => ({
      claimed: await claim(tx),
      reads: await readAll(tx, t, internal.id, external.id),
    }));
    expect(first).toStrictEqual({ claimed: true, reads: alone });
    const second = await t.deps.db.transaction(async (tx) => ({
      claimed: await claim(tx),
      record: await findRecord(tx, t.platformId, 'test', 'k1'),
    }));
    expect(second).toStrictEqual({ claimed: false, record: { requestHash: 'hash', status: 0, body: '' } });
  });

  it.skipIf(databaseUrl === undefined)('cost one statement on PostgreSQL, and each row is taken once', async () => {
    const t = await build();
    const internal = await fundedUsd(t);
    const external = await externalAccount(t, 'USD_ACCOUNT');
    await t.deps.db.transaction(async (tx) => {
      expect(onPostgres(tx)).toBe(true);
      const client = await clientOf(tx);
      const reads = readsOf(t, internal.id, external.id);
      expect((await counted(client, () => prefetch(tx, reads))).statements).toBe(1);
      expect((await counted(client, () => readAll(tx, t, internal.id, external.id))).statements).toBe(0);
      // Taken: read again (the platform's row stays memoized by platformCore).
      expect((await counted(client, () => findInternalAccount(tx, t.platformId, internal.id))).statements).toBe(1);
    });
  });
});
