// Snapshots over HTTP (POST /_railyard/snapshots, …/{name}/restore, GET, DELETE): a restore
// after a series of transfers, quotes and card transactions gives back the platform of the
// moment of the save, read through the API (balances, lists with their totalCount, the ledger
// check, the event log, the webhook deliveries, the clock) and row by row in the store; the
// jobs due then run again on time, once per timeline; credentials stay those of now; other
// platforms are untouched; the refusals; and a snapshot that outlives a restart and a later
// migration that adds a column, and one from a later version refused.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/index.js';
import { seedPlatform } from '../../src/sandbox/seed.js';
import { DERIVED, NOT_SNAPSHOTTED } from '../../src/sandbox/snapshots/service.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { expectBalancedBooks, externalAccount, fund, platformAccount, transferOut } from '../fixtures/money.js';
import { accountQuoteBody, createQuote, executeQuote } from '../fixtures/quotes.js';
import { build, type Credentials, type Tenant, type TestApp } from '../helper.js';
import { rowsOf } from './support.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every item of a paged list, following nextCursor. */
async function allOf(t: Tenant, path: string): Promise<{ items: any[]; totalCount: number | undefined }> {
  const items: any[] = [];
  let totalCount: number | undefined;
  let cursor: string | undefined;
  const join = path.includes('?') ? '&' : '?';
  for (let page = 0; page < 50; page++) {
    const url = `${path}${join}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const reply = path.startsWith('/_railyard') ? await t.raw('GET', url) : await t.api('GET', url);
    expect(reply.status, `${url}: ${reply.text}`).toBe(200);
    items.push(...reply.body.data);
    totalCount ??= reply.body.totalCount;
    if (!reply.body.hasMore) return { items, totalCount };
    cursor = reply.body.nextCursor;
  }
  throw new Error(`${path}: more than 50 pages`);
}

/** What an integration sees of the platform: lists (with totalCount), balances, the books, events, deliveries. */
async function apiView(t: Tenant) {
  return {
    config: (await t.api('GET', '/config')).body,
    transactions: await allOf(t, '/transactions'),
    processing: await allOf(t, '/transactions?status=PROCESSING'),
    customers: await allOf(t, '/customers'),
    platformAccounts: await allOf(t, '/platform/internal-accounts'),
    customerAccounts: await allOf(t, '/customers/internal-accounts'),
    externalAccounts: await allOf(t, '/customers/external-accounts'),
    cards: await allOf(t, '/cards'),
    ledger: (await t.raw('GET', '/_railyard/ledger')).body,
    events: await allOf(t, '/_railyard/events'),
    deliveries: await allOf(t, '/_railyard/webhooks/deliveries'),
  };
}

/** The platform's rows in the store, but those a snapshot leaves out; the derived counts summed over their shards. */
async function storeView(t: TestApp, platformId: string) {
  const rows = await rowsOf(t, platformId);
  for (const table of [...Object.keys(NOT_SNAPSHOTTED), ...Object.keys(DERIVED)]) delete rows[table];
  const counts = await sql<{ list: string; dim: string; value: string; day: string; n: string }>`
    SELECT list, dim, value, day, CAST(SUM(n) AS TEXT) AS n FROM list_counts WHERE platform_id = ${platformId}
    GROUP BY list, dim, value, day HAVING SUM(n) <> 0 ORDER BY list, dim, value, day`.execute(t.deps.db.k);
  const total = await sql<{ n: string | null }>`
    SELECT CAST(SUM(n) AS TEXT) AS n FROM transaction_counts WHERE platform_id = ${platformId}`.execute(t.deps.db.k);
  return { rows, listCounts: counts.rows, transactionCount: Number(total.rows[0]?.n ?? 0) };
}

async function save(t: Tenant, name: string, body: Record<string, unknown> = {}) {
  const reply = await t.raw('POST', '/_railyard/snapshots', { body: { name, ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

async function restore(t: Tenant, name: string) {
  const reply = await t.raw('POST', `/_railyard/snapshots/${name}/restore`);
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

/** A card of a new approved customer, funded, and one authorization on it, cleared. */
async function cardTransaction(t: TestApp, amount: number): Promise<string> {
  const customer = await createCustomer(t, individualBody('Lena Fischer'));
  const usd = (await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`)).body.data[0];
  await fund(t, usd.id, 50_000);
  const issued = await t.api('POST', '/cards', {
    body: { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [usd.id] },
  });
  expect(issued.status, issued.text).toBe(201);
  await t.runDueJobs();
  const merchant = { descriptor: 'CORNER BAKERY 4410', mcc: '5812', country: 'US' };
  const authorized = await t.api('POST', `/sandbox/cards/${issued.body.id}/simulate/authorization`, {
    body: { amount, currency: { code: 'USD' }, merchant },
  });
  expect(authorized.status, authorized.text).toBe(202);
  await t.runDueJobs();
  const record = await t.raw('GET', `/_railyard/card-simulations/${authorized.body.issuerTransactionToken}`);
  expect(record.body.status).toBe('APPLIED');
  return record.body.cardTransactionId;
}

/** Money of several kinds: transfers out, an executed EUR quote, a card transaction. */
async function moneyMoves(t: TestApp, source: string, bank: string, eur: string, round: number): Promise<void> {
  for (let i = 0; i < 3; i++)
    expect(
      (await transferOut(t, source, bank, 1_000 + round * 10 + i, { 'idempotency-key': `r${round}-${i}` })).status,
    ).toBe(201);
  const quote = await createQuote(t, accountQuoteBody(source, eur, { amount: 5_000 + round }));
  expect(quote.status, quote.text).toBe(201);
  expect((await executeQuote(t, quote.body.id)).status).toBe(200);
  await cardTransaction(t, 700 + round);
  await t.runDueJobs();
}

describe('POST /_railyard/snapshots/{name}/restore', () => {
  it('gives back the platform of the moment of the save, and the jobs due then run again on time, once per timeline', async () => {
    const t = await build();
    const other = await t.newPlatform();
    await seedPlatform(t.app, t.platformId, { seed: 5, size: 1 });
    await seedPlatform(t.app, other.platformId, { seed: 6, size: 1 });
    const source = (await platformAccount(t, 'USD')).id;
    const bank = (await externalAccount(t, 'USD_ACCOUNT', '000')).id;
    const eur = (await externalAccount(t, 'EUR_ACCOUNT', '000')).id;
    await moneyMoves(t, source, bank, eur, 1);

    // The seed's 005 payout is PROCESSING; it fails 30 s of sandbox time after it began.
    const pending = (await allOf(t, '/transactions?status=PROCESSING')).items;
    expect(pending).toHaveLength(1);
    const payout = pending[0].id as string;

    const saved = await save(t, 'before');
    expect(saved).toMatchObject({ name: 'before', schemaVersion: expect.stringMatching(/^\d{4}_/) });
    expect(saved.rows).toMatchObject({
      customers: expect.any(Number),
      transactions: expect.any(Number),
      jobs: expect.any(Number),
    });
    expect(saved.rows.api_tokens).toBeUndefined();
    const apiBefore = await apiView(t);
    const storeBefore = await storeView(t, t.platformId);
    const otherBefore = await rowsOf(t, other.platformId);
    expect(apiBefore.ledger.balanced).toBe(true);

    // A later timeline: more money, a new customer, the payout's failure, a changed configuration.
    await moneyMoves(t, source, bank, eur, 2);
    await createCustomer(t, individualBody('Noah Later'));
    expect((await t.api('PATCH', '/config', { body: { umaDomain: 'later.example.com' } })).status).toBe(200);
    await t.advanceClock(35);
    expect((await t.api('GET', `/transactions/${payout}`)).body.status).toBe('FAILED');
    const failedEvents = async () =>
      (await allOf(t, `/_railyard/events?resourceId=${encodeURIComponent(payout)}&type=OUTGOING_PAYMENT.FAILED`)).items;
    expect(await failedEvents()).toHaveLength(1);
    expect((await apiView(t)).transactions.totalCount).toBeGreaterThan(apiBefore.transactions.totalCount!);

    const restored = await restore(t, 'before');
    expect(restored).toMatchObject({ name: 'before', platformId: t.platformId });
    expect(restored.restored.customers).toBe(apiBefore.customers.items.length);
    // The clock reads the instant of the save again (and runs on from there).
    const clock = (await t.raw('GET', '/_railyard/clock')).body;
    const clockMs = Date.parse(clock.now) - Date.parse(saved.createdAt);
    expect(clockMs).toBeGreaterThanOrEqual(0);
    expect(clockMs).toBeLessThan(5_000);

    expect(await apiView(t)).toEqual(apiBefore);
    expect(await storeView(t, t.platformId)).toEqual(storeBefore);
    expect(await rowsOf(t, other.platformId)).toEqual(otherBefore);
    await expectBalancedBooks(t);

    // The payout's failure was due 30 s after it began: it happens again on the sandbox clock, once.
    await t.advanceClock(10);
    expect((await t.api('GET', `/transactions/${payout}`)).body.status).toBe('PROCESSING');
    expect(await failedEvents()).toHaveLength(0);
    await t.advanceClock(25);
    expect((await t.api('GET', `/transactions/${payout}`)).body.status).toBe('FAILED');
    expect(await failedEvents()).toHaveLength(1);
    await t.advanceClock(3600);
    expect(await failedEvents()).toHaveLength(1);

    // The same snapshot again: the same platform once more, and the platform works on from it.
    await restore(t, 'before');
    expect(await apiView(t)).toEqual(apiBefore);
    await moneyMoves(t, source, bank, eur, 3);
    await expectBalancedBooks(t);
    expect((await apiView(t)).transactions.totalCount).toBe(apiBefore.transactions.totalCount! + 5);
  }, 240_000);

  it('keeps the credentials of now, restores the configuration, and replays idempotency keys of its own timeline only', async () => {
    const t = await build();
    const source = (await platformAccount(t, 'USD')).id;
    await fund(t, source, 100_000);
    const bank = (await externalAccount(t, 'USD_ACCOUNT', '000')).id;
    const first = await transferOut(t, source, bank, 1_000, { 'idempotency-key': 'kept-key' });
    expect(first.status).toBe(201);
    const reader = await t.api('POST', '/tokens', { body: { name: 'reader', permissions: ['VIEW'] } });
    await save(t, 'start');
    const publicKey = (await t.raw('GET', '/_railyard/webhook-public-key')).text;

    // After the save: a token added, one deleted, a setting changed, a key used.
    const added = await t.api('POST', '/tokens', { body: { name: 'added', permissions: ['VIEW'] } });
    expect((await t.api('DELETE', `/tokens/${reader.body.id}`)).status).toBe(204);
    expect(
      (await t.raw('PATCH', '/_railyard/platform', { body: { name: 'Renamed', counterpartyRules: true } })).status,
    ).toBe(200);
    const later = await transferOut(t, source, bank, 2_000, { 'idempotency-key': 'later-key' });
    expect(later.status).toBe(201);

    await restore(t, 'start');
    const asAdded: Credentials = { ...added.body, platformId: t.platformId, tokenId: added.body.id };
    const asReader: Credentials = { ...reader.body, platformId: t.platformId, tokenId: reader.body.id };
    expect((await t.api('GET', '/config', { auth: asAdded })).status).toBe(200);
    expect((await t.api('GET', '/config', { auth: asReader })).status).toBe(401);
    const tokenNames = (await t.api('GET', '/tokens')).body.data.map((token: any) => token.name);
    expect(tokenNames).toContain('added');
    expect(tokenNames).not.toContain('reader');
    expect((await t.raw('GET', '/_railyard/webhook-public-key')).text).toBe(publicKey);
    expect((await t.raw('GET', '/_railyard/platform')).body).toMatchObject({
      name: 'Test platform',
      counterpartyRules: false,
    });

    // A key of the saved timeline replays its answer; one of the undone timeline moves money anew.
    const replay = await transferOut(t, source, bank, 1_000, { 'idempotency-key': 'kept-key' });
    expect(replay.text).toBe(first.text);
    const again = await transferOut(t, source, bank, 2_000, { 'idempotency-key': 'later-key' });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(later.body.id);
    expect((await t.api('GET', `/transactions/${later.body.id}`)).status).toBe(404);
    await expectBalancedBooks(t);
  }, 60_000);

  it('is per platform: names are the platform’s own, and another platform’s snapshot is 404', async () => {
    const t = await build();
    const other = await t.newPlatform();
    await createCustomer(t, individualBody('Ada Mine'));
    await createCustomer(other, individualBody('Bo Theirs'));
    await save(t, 'shared-name');
    await save(other, 'shared-name');
    await save(other, 'theirs-only');
    const otherRows = await rowsOf(t, other.platformId);

    expect((await t.raw('GET', '/_railyard/snapshots')).body.data.map((s: any) => s.name)).toEqual(['shared-name']);
    for (const [method, path] of [
      ['POST', '/_railyard/snapshots/theirs-only/restore'],
      ['DELETE', '/_railyard/snapshots/theirs-only'],
    ] as const) {
      const refused = await t.raw(method, path);
      expect(refused.status).toBe(404);
      expect(refused.body).toMatchObject({ status: 404, code: 'REFERENCE_NOT_FOUND' });
    }
    await createCustomer(t, individualBody('Cy Later'));
    await restore(t, 'shared-name');
    expect((await allOf(t, '/customers')).items.map((c: any) => c.fullName)).toEqual(['Ada Mine']);
    expect(await rowsOf(t, other.platformId)).toEqual(otherRows);
    expect((await other.raw('GET', '/_railyard/snapshots')).body.data.map((s: any) => s.name).sort()).toEqual([
      'shared-name',
      'theirs-only',
    ]);
  });
});

describe('GET, POST and DELETE /_railyard/snapshots', () => {
  it('lists, refuses taken and bad names, replaces on request, deletes, and needs MANAGE to change', async () => {
    const t = await build();
    expect((await t.raw('GET', '/_railyard/snapshots')).body).toEqual({ data: [] });
    const first = await save(t, 'one');
    await createCustomer(t, individualBody('Ida Second'));
    await save(t, 'two.v2_final-B');
    const listed = (await t.raw('GET', '/_railyard/snapshots')).body.data;
    expect(listed.map((s: any) => s.name)).toEqual(['two.v2_final-B', 'one']);
    expect(listed[1]).toEqual(first);
    expect(listed[0].rows.customers).toBe(1);
    expect(listed[0].sizeBytes).toBeGreaterThan(first.sizeBytes);

    const taken = await t.raw('POST', '/_railyard/snapshots', { body: { name: 'one' } });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ status: 409, code: 'CONFLICT', details: { reason: 'SNAPSHOT_EXISTS' } });
    const replaced = await save(t, 'one', { replace: true });
    expect(replaced.rows.customers).toBe(1);

    for (const name of ['', '-starts-with-dash', 'has space', 'x'.repeat(65), 'slash/inside', 'ünïcode', 7]) {
      const refused = await t.raw('POST', '/_railyard/snapshots', { body: { name } });
      expect(refused.status, JSON.stringify(name)).toBe(400);
      expect(refused.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
      expect(refused.body.details.errors.map((e: any) => e.field)).toContain('name');
    }
    const unknownField = await t.raw('POST', '/_railyard/snapshots', { body: { name: 'ok', keep: true } });
    expect(unknownField.status).toBe(400);
    expect((await t.raw('POST', '/_railyard/snapshots', {})).status).toBe(400);
    // In a path, a name no snapshot can have names nothing, as an impossible id does anywhere: 404.
    for (const path of [
      '/_railyard/snapshots/never-saved/restore',
      '/_railyard/snapshots/bad%20name/restore',
      `/_railyard/snapshots/${'y'.repeat(65)}/restore`,
    ]) {
      const refused = await t.raw('POST', path);
      expect(refused.status, path).toBe(404);
      expect(refused.body).toMatchObject({ status: 404, code: 'REFERENCE_NOT_FOUND' });
    }
    expect((await t.raw('GET', '/_railyard/snapshots')).body.data).toHaveLength(2);

    const token = await t.api('POST', '/tokens', { body: { name: 'reader', permissions: ['VIEW', 'TRANSACT'] } });
    const reader = { ...token.body, platformId: t.platformId, tokenId: token.body.id };
    expect((await t.raw('GET', '/_railyard/snapshots', { auth: reader })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/_railyard/snapshots', { name: 'nope' }],
      ['POST', '/_railyard/snapshots/one/restore', undefined],
      ['DELETE', '/_railyard/snapshots/one', undefined],
    ] as const) {
      const refused = await t.raw(method, path, { auth: reader, ...(body ? { body } : {}) });
      expect(refused.status, path).toBe(401);
      expect(refused.body).toMatchObject({ code: 'UNAUTHORIZED', details: { requiredPermission: 'MANAGE' } });
    }
    expect((await t.raw('GET', '/_railyard/snapshots', { auth: null })).status).toBe(401);

    const deleted = await t.raw('DELETE', '/_railyard/snapshots/one');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await t.raw('DELETE', '/_railyard/snapshots/one')).status).toBe(404);
    expect((await t.raw('GET', '/_railyard/snapshots')).body.data.map((s: any) => s.name)).toEqual(['two.v2_final-B']);

    const doc = (await t.raw('GET', '/_railyard/openapi.json', { auth: null })).body;
    expect(doc.paths['/snapshots/{name}/restore'].post.operationId).toBe('railyardRestoreSnapshot');
  });
});

describe('a snapshot and the store', () => {
  it('survives a restart, restores by column name in a later version, and is refused by an earlier one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'railyard-snapshots-'));
    dirs.push(dataDir);
    let t = await build({ config: { dataDir } });
    const source = (await platformAccount(t, 'USD')).id;
    await fund(t, source, 25_000);
    const customer = await createCustomer(t, individualBody('Rhea Restart'));
    await save(t, 'kept');
    const before = await apiView(t);
    await createCustomer(t, individualBody('Gone Again'));

    // The next version: a migration adds a column with a default to customers, and another
    // takes one away from the snapshot's point of view (the stored rows name a column the
    // table no longer has).
    t = await t.restart();
    await sql`ALTER TABLE customers ADD COLUMN nickname text NOT NULL DEFAULT 'none'`.execute(t.deps.db.k);
    const stored = await t.deps.db.k
      .selectFrom('snapshots')
      .select('content')
      .where('platform_id', '=', t.platformId)
      .executeTakeFirstOrThrow();
    const content = JSON.parse(stored.content);
    content.tables.customers.columns.push('retired_column');
    for (const row of content.tables.customers.rows) row.push('old value');
    // Saved by the version before: its schema is an earlier migration's.
    await t.deps.db.k
      .updateTable('snapshots')
      .set({ content: JSON.stringify(content), schema_version: '0001_foundation' })
      .where('platform_id', '=', t.platformId)
      .execute();
    t = await t.restart();

    const listed = (await t.raw('GET', '/_railyard/snapshots')).body.data;
    expect(listed.map((s: any) => [s.name, s.schemaVersion])).toEqual([['kept', '0001_foundation']]);
    await restore(t, 'kept');
    expect(await apiView(t)).toEqual(before);
    const rows = await t.deps.db.k
      .selectFrom('customers')
      .select(['id', sql<string>`nickname`.as('nickname')])
      .where('platform_id', '=', t.platformId)
      .execute();
    expect(rows).toEqual([{ id: customer.id, nickname: 'none' }]);

    // One saved by a later version than this one is refused, and nothing changes.
    await createCustomer(t, individualBody('Stays Put'));
    const now = await apiView(t);
    await t.deps.db.k
      .updateTable('snapshots')
      .set({ schema_version: '9999_later' })
      .where('platform_id', '=', t.platformId)
      .execute();
    const refused = await t.raw('POST', '/_railyard/snapshots/kept/restore');
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'CONFLICT',
      details: { reason: 'SNAPSHOT_FROM_LATER_VERSION', schemaVersion: '9999_later' },
    });
    expect(await apiView(t)).toEqual(now);
  }, 60_000);
});
