// Round trips to PostgreSQL per request, counted on the driver: every statement a request
// sends (BEGIN and COMMIT included) is a trip over the network to the database, unless it is
// written behind one still waiting for its answer (pipelined, db/deferred.ts). A keyed
// transfer-out sends 6 statements in 4 trips: the token's lookup; BEGIN with the key's claim
// carrying the reads (db/prefetch.ts); the write (new rows travel with the next statement:
// db/deferred.ts); the key's answer carrying the events, with the COMMIT.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';
import { watchStatements } from '../fixtures/statements.js';
import { dropPgSchema, openDb, sql } from '../../src/db/index.js';
import { enableServerAdmin } from '../../src/sandbox/server-admin.js';
import { individualBody } from '../fixtures/customers.js';
import { build, databaseUrl } from '../helper.js';

/** The statements `send` makes the server run, counted on every pg client (StatementWatch.ofRequests). */
async function statementsOf(
  send: () => Promise<{ status: number }>,
): Promise<{ status: number; statements: string[]; names: (string | undefined)[]; trips: number }> {
  const watch = watchStatements();
  try {
    const reply = await send();
    const kept = watch.ofRequests();
    return {
      status: reply.status,
      statements: kept.map((i) => watch.texts[i]!),
      names: kept.map((i) => watch.names[i]),
      trips: kept.filter((i) => !watch.pipelined[i]).length,
    };
  } finally {
    watch.stop();
  }
}

/**
 * A keyed transfer-out after a first one (which warms what a process reads once: system
 * accounts, prepared plans), with its statements; asserts it succeeded in at most 6
 * statements and 4 trips.
 */
async function measuredTransferOut(t: Awaited<ReturnType<typeof build>>, sourceId: string, destinationId: string) {
  expect((await transferOut(t, sourceId, destinationId, 100, { 'idempotency-key': 'rt-warm' })).status).toBe(201);
  // What the journal took so far is written before the count starts.
  await t.deps.journal?.flush();
  const measured = await statementsOf(() =>
    transferOut(t, sourceId, destinationId, 100, { 'idempotency-key': 'rt-measured' }),
  );
  expect(measured.status).toBe(201);
  const listing = measured.statements.map((s) => s.slice(0, 100)).join('\n');
  expect(measured.statements.length, listing).toBeLessThanOrEqual(6);
  expect(measured.trips, listing).toBeLessThanOrEqual(4);
  return { measured, listing };
}

describe.skipIf(databaseUrl === undefined)('round trips to PostgreSQL', () => {
  it('a transfer-out with an Idempotency-Key takes at most 6 statements, in 4 trips', async () => {
    const t = await build();
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const { measured, listing } = await measuredTransferOut(t, source.id, destination.id);
    // The transaction's row, its postings and entries go with the balance update, in one statement.
    const write = measured.statements.filter((s) => s.includes('insert into "transactions"'));
    expect(write, listing).toHaveLength(1);
    for (const part of ['insert into "ledger_postings"', 'insert into "ledger_entries"', 'update "ledger_accounts"'])
      expect(write[0], listing).toContain(part);
    // The key's claim carries the reads of both accounts and the platform's row (db/prefetch.ts),
    // the destination under its share lock.
    const claim = measured.statements.filter((s) => s.includes('insert into "idempotency_keys"'));
    expect(claim, listing).toHaveLength(1);
    for (const part of ['from "internal_accounts"', 'from "external_accounts"', 'for share', 'from "platforms"'])
      expect(claim[0], listing).toContain(part);
    // The platform's row is read once per transaction, however many parts of the request need it.
    expect(measured.statements.filter((s) => s.includes('from "platforms"'))).toHaveLength(1);
    // Every statement with parameters goes as a named prepared statement (db/deferred.ts),
    // the same text under the same name in the next request.
    const named = measured.statements.map((s, i) => [s, measured.names[i]] as const).filter(([s]) => s.includes('$1'));
    expect(named.length, listing).toBeGreaterThan(0);
    for (const [statement, name] of named) expect(name, statement.slice(0, 100)).toMatch(/^railyard_\d+$/);
    const again = await statementsOf(() =>
      transferOut(t, source.id, destination.id, 100, { 'idempotency-key': 'rt-measured-again' }),
    );
    expect(again.names).toEqual(measured.names);
    // BEGIN goes with the claim, and the key's answer (with the events) with the COMMIT.
    expect(measured.statements[1], listing).toMatch(/^begin$/i);
    expect(measured.statements.at(-1), listing).toMatch(/^commit$/i);
    expect(measured.trips, listing).toBe(4);
  });

  it("a customer's transfer-out too: the owner's row, for the transaction's platformCustomerId, comes with the claim", async () => {
    const t = await build();
    const customer = (await t.api('POST', '/customers', { body: individualBody('Counted Owner') })).body;
    const accounts = await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`);
    const source = accounts.body.data[0].id as string;
    expect(
      (await t.api('POST', `/sandbox/internal-accounts/${source}/fund`, { body: { amount: 100_000 } })).status,
    ).toBe(200);
    const destination = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('USD_ACCOUNT', '000'), customerId: customer.id },
    });
    expect(destination.status).toBe(201);
    const { measured, listing } = await measuredTransferOut(t, source, destination.body.id);
    const claim = measured.statements.filter((s) => s.includes('insert into "idempotency_keys"'));
    expect(claim[0], listing).toContain('from "customers"');
    expect(
      measured.statements.filter((s) => s.includes('from "customers"')),
      listing,
    ).toHaveLength(1);
    expect(measured.trips, listing).toBe(4);
  });

  it('sends statements unnamed when prepared statements are turned off (RAILYARD_PG_PREPARED=0)', async () => {
    const pgSchema = `t_${randomBytes(6).toString('hex')}`;
    const db = await openDb({ dataDir: ':memory:', databaseUrl, pgSchema, pgPrepared: false });
    try {
      const measured = await statementsOf(async () => {
        await sql`SELECT ${1}::int AS one`.execute(db.k);
        return { status: 200 };
      });
      expect(measured.statements.some((s) => s.includes('$1'))).toBe(true);
      expect(measured.names.every((name) => name === undefined)).toBe(true);
    } finally {
      await db.close();
      await dropPgSchema(databaseUrl!, pgSchema);
    }
  });

  it('still 6 when the platform has a webhook endpoint: the deliveries and their jobs travel with the key answer', async () => {
    const t = await build();
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    // Nothing listens there: the tries fail, which does not matter to what the request sends.
    expect((await t.api('PATCH', '/config', { body: { webhookEndpoint: 'http://127.0.0.1:9/hooks' } })).status).toBe(
      200,
    );
    const { measured, listing } = await measuredTransferOut(t, source.id, destination.id);
    // Three events (PROCESSING, COMPLETED, the balance), each with its delivery and job, all
    // in the statement of the key's answer.
    const answer = measured.statements.filter((s) => s.includes('update "idempotency_keys"'));
    expect(answer, listing).toHaveLength(1);
    for (const table of ['events', 'webhook_deliveries', 'jobs'])
      expect(answer[0]!.split(`insert into "${table}"`).length - 1, `${table}\n${listing}`).toBe(
        table === 'events' ? 1 : 3,
      );
  });

  it('a new platform is 3 statements in one trip: BEGIN, its rows, COMMIT; a new customer writes its accounts in one', async () => {
    const t = await build();
    const adminToken = `rt-admin-${randomBytes(12).toString('hex')}`;
    enableServerAdmin(t.deps, adminToken);
    const create = () =>
      t.raw('POST', '/_railyard/server/platforms', {
        headers: { authorization: `Bearer ${adminToken}` },
        body: { name: 'Counted' },
      });
    expect((await create()).status).toBe(201);
    await t.deps.journal?.flush();
    const platform = await statementsOf(create);
    expect(platform.status).toBe(201);
    const listing = platform.statements.map((s) => s.slice(0, 100)).join('\n');
    expect(platform.statements, listing).toHaveLength(3);
    // Every row is a deferred insert: they wait for the COMMIT, and the BEGIN for them.
    expect(platform.trips, listing).toBe(1);
    // The platform, its token, its internal accounts and every ledger account, in the middle one.
    for (const table of ['platforms', 'api_tokens', 'internal_accounts', 'ledger_accounts'])
      expect(platform.statements[1], listing).toContain(`insert into "${table}"`);
    // A customer: its accounts in one insert per table, whatever the number of currencies.
    expect((await t.api('POST', '/customers', { body: individualBody('Warm Up') })).status).toBe(201);
    await t.deps.journal?.flush();
    const customer = await statementsOf(() =>
      t.api('POST', '/customers', { body: individualBody('Counted Customer') }),
    );
    expect(customer.status).toBe(201);
    const written = customer.statements.join('\n');
    expect(written.split('insert into "internal_accounts"').length - 1, written).toBe(1);
    expect(written.split('insert into "ledger_accounts"').length - 1, written).toBe(1);
  });
});
