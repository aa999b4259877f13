// Concurrent transfer-outs from one account never overdraw it, pay each accepted transfer
// once, and keep the books balanced; one Idempotency-Key gives one transaction. In process
// on the store under test (SQLite, or PostgreSQL with DATABASE_URL), and with two server
// processes sharing one PostgreSQL database.

import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { build, databaseUrl } from '../helper.js';
import { accountBody } from '../fixtures/accounts.js';
import { balances, eventsOf, expectBalancedBooks, externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';
import { startServer, type ServerProcess } from '../fixtures/server.js';

const TRANSFERS = 200;
const FUNDED = 100_000;
/** Amounts 700 to 1,300: together about 200,000, twice what the account holds. */
const amountOf = (i: number) => 700 + ((i * 37) % 7) * 100;

interface Outcome {
  status: number;
  body: any;
  amount: number;
}

/** A server's log lines at level error, shortened. */
const errorLines = (log: string) =>
  log
    .split('\n')
    .filter((line) => line.includes('"level":50'))
    .map((line) => line.slice(0, 600))
    .join('\n');

function checkOutcomes(outcomes: Outcome[]) {
  for (const o of outcomes) {
    if (o.status !== 201) {
      expect(o.status).toBe(400);
      expect(o.body).toMatchObject({ code: 'INVALID_AMOUNT', details: { reason: 'INSUFFICIENT_BALANCE' } });
    } else {
      expect(o.body.status).toBe('COMPLETED');
    }
  }
  const accepted = outcomes.filter((o) => o.status === 201);
  const paid = accepted.reduce((sum, o) => sum + o.amount, 0);
  expect(new Set(accepted.map((o) => o.body.id)).size).toBe(accepted.length);
  // Well more than half cannot fit; the account ends with less than the smallest amount left.
  expect(accepted.length).toBeGreaterThan(70);
  expect(accepted.length).toBeLessThan(TRANSFERS);
  expect(paid).toBeLessThanOrEqual(FUNDED);
  expect(FUNDED - paid).toBeLessThan(1_300);
  return { accepted, paid };
}

describe('concurrent POST /transfer-out from one account', () => {
  it(`${TRANSFERS} at once: never overdrawn, every accepted one paid exactly once, books balanced`, async () => {
    const t = await build();
    const source = await fundedUsd(t, FUNDED);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const outcomes: Outcome[] = await Promise.all(
      Array.from({ length: TRANSFERS }, async (_, i) => {
        const reply = await transferOut(t, source.id, destination.id, amountOf(i), { 'idempotency-key': `burst-${i}` });
        return { status: reply.status, body: reply.body, amount: amountOf(i) };
      }),
    );
    const { accepted, paid } = checkOutcomes(outcomes);
    expect(await balances(t, source.id)).toEqual({ balance: FUNDED - paid, totalBalance: FUNDED - paid });

    // Each accepted transfer exists once, with exactly one hold and one settlement.
    const list = await t.api('GET', '/transactions?limit=100');
    expect(list.body.totalCount).toBe(accepted.length);
    const postings = await t.deps.db.k
      .selectFrom('ledger_postings')
      .select(['transaction_id', 'kind'])
      .where('transaction_id', 'is not', null)
      .execute();
    const byTransaction = new Map<string, string[]>();
    for (const p of postings)
      byTransaction.set(p.transaction_id!, [...(byTransaction.get(p.transaction_id!) ?? []), p.kind]);
    expect(byTransaction.size).toBe(accepted.length);
    for (const o of accepted) expect(byTransaction.get(o.body.id)!.sort()).toEqual(['HOLD', 'SETTLE']);

    // No balance the account ever reported was negative.
    const reported = (await eventsOf(t, source.id)).map((e) => e.data.balance.amount as number);
    expect(reported.length).toBe(1 + accepted.length);
    expect(Math.min(...reported)).toBeGreaterThanOrEqual(0);
    await expectBalancedBooks(t);
  });

  it('one Idempotency-Key sent concurrently gives one transaction and one answer', async () => {
    const t = await build();
    const source = await fundedUsd(t, FUNDED);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const replies = await Promise.all(
      Array.from({ length: 25 }, () =>
        transferOut(t, source.id, destination.id, 1_000, { 'idempotency-key': 'same-payout' }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(25).fill(201));
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect((await t.api('GET', '/transactions')).body.totalCount).toBe(1);
    expect(await balances(t, source.id)).toEqual({ balance: FUNDED - 1_000, totalBalance: FUNDED - 1_000 });
  });
});

describe('GET /_railyard/ledger while payments commit', () => {
  it('reads one snapshot of the books, so it never reports balanced books as unbalanced', async () => {
    const t = await build();
    const source = await fundedUsd(t, 10_000_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    let stop = false;
    const audits: { balanced: boolean; accounts: { id: string; consistent: boolean }[] }[] = [];
    const poll = (async () => {
      while (!stop) {
        audits.push((await t.raw('GET', '/_railyard/ledger')).body);
        // Let the transfers in between two reads (inject alone never yields to them).
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const replies = await Promise.all(
      Array.from({ length: 300 }, () => transferOut(t, source.id, destination.id, 100)),
    );
    stop = true;
    await poll;
    expect(replies.every((r) => r.status === 201)).toBe(true);
    await expectBalancedBooks(t);
    // Each payment moved its money in one database transaction: the books were right throughout.
    expect(audits.length).toBeGreaterThan(1);
    expect(
      audits.filter((a) => !a.balanced).map((a) => a.accounts.filter((x) => !x.consistent).map((x) => x.id)),
    ).toEqual([]);
  });
});

describe.skipIf(!databaseUrl)('two server instances sharing one PostgreSQL database', () => {
  const schema = `two_${randomBytes(5).toString('hex')}`;
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('share the money correctly: no overdraft, one transaction per key, each pending transfer failed once', async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
    const url = new URL(databaseUrl!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // One after the other: the first start creates the pinned platform, the second finds it.
    servers.push(await startServer({ DATABASE_URL: url.toString() }));
    servers.push(await startServer({ DATABASE_URL: url.toString() }));
    const [a, b] = servers as [ServerProcess, ServerProcess];

    const source = (await a.request('GET', '/platform/internal-accounts?currency=USD')).body.data[0];
    expect((await b.request('POST', `/sandbox/internal-accounts/${source.id}/fund`, { amount: FUNDED })).status).toBe(
      200,
    );
    const destination = (await a.request('POST', '/platform/external-accounts', accountBody('USD_ACCOUNT', '000')))
      .body;
    const body = (amount: number) => ({
      source: { accountId: source.id },
      destination: { accountId: destination.id },
      amount,
    });

    const outcomes: Outcome[] = await Promise.all(
      Array.from({ length: TRANSFERS }, async (_, i) => {
        const server = i % 2 === 0 ? a : b;
        const reply = await server.request('POST', '/transfer-out', body(amountOf(i)), {
          'idempotency-key': `two-${i}`,
        });
        return { ...reply, amount: amountOf(i) };
      }),
    );
    // A 5xx is a failure of its own: shown with the servers' error lines, which say why.
    expect(
      outcomes.filter((o) => o.status >= 500).map((o) => o.body),
      servers.map((s) => errorLines(s.output())).join('\n'),
    ).toEqual([]);
    const { accepted, paid } = checkOutcomes(outcomes);
    const account = (await b.request('GET', '/platform/internal-accounts?currency=USD')).body.data[0];
    expect(account.balance.amount).toBe(FUNDED - paid);
    expect((await a.request('GET', '/transactions?limit=1')).body.totalCount).toBe(accepted.length);

    // One key sent to both instances at once.
    const keyed = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).request(
          'POST',
          '/transfer-in',
          { source: { accountId: destination.id }, destination: { accountId: source.id }, amount: 5_000 },
          { 'idempotency-key': 'shared-key' },
        ),
      ),
    );
    expect(keyed.every((r) => r.status === 201)).toBe(true);
    expect(new Set(keyed.map((r) => r.body.id)).size).toBe(1);
    expect((await a.request('GET', '/transactions?type=INCOMING')).body.totalCount).toBe(1);

    // Pending 005 transfers: both instances' job runners race for them; each fails once.
    const slow = (await b.request('POST', '/platform/external-accounts', accountBody('USD_ACCOUNT', '005'))).body;
    const pending = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? a : b).request('POST', '/transfer-out', {
          source: { accountId: source.id },
          destination: { accountId: slow.id },
          amount: 100,
        }),
      ),
    );
    expect(pending.map((r) => r.body.status)).toEqual(Array(10).fill('PROCESSING'));
    // Whichever instance runs each job, the advance answers only once all of them have run.
    // One job is held meanwhile the way an instance running it holds it (its row locked by
    // the claiming transaction), until that attempt gives it up 300 ms later, so the answer
    // also waits for a job that is busy elsewhere when this instance runs out of work.
    const holder = new pg.Client({ connectionString: url.toString() });
    await holder.connect();
    await holder.query('BEGIN');
    const held = await holder.query(
      `SELECT id FROM jobs WHERE kind = 'rail.outcome' AND status = 'PENDING' AND payload LIKE $1 FOR UPDATE`,
      [`%${pending[0]!.body.id}%`],
    );
    expect(held.rowCount).toBe(1);
    const released = sleep(300)
      .then(() => holder.query('ROLLBACK'))
      .finally(() => holder.end());
    expect((await a.request('POST', '/_railyard/clock/advance', { seconds: 31 })).status).toBe(200);
    await released;
    for (const r of pending) {
      const tx = (await b.request('GET', `/transactions/${r.body.id}`)).body;
      expect(tx).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED' });
    }
    const check = new pg.Client({ connectionString: url.toString() });
    await check.connect();
    const releases = await check.query(
      `SELECT transaction_id, COUNT(*) AS n FROM ledger_postings WHERE kind = 'RELEASE' GROUP BY transaction_id`,
    );
    const failedEvents = await check.query(
      `SELECT resource_id, COUNT(*) AS n FROM events WHERE type = 'OUTGOING_PAYMENT.FAILED' GROUP BY resource_id`,
    );
    await check.end();
    expect(releases.rows.length).toBe(10);
    expect(releases.rows.every((r) => Number(r.n) === 1)).toBe(true);
    expect(failedEvents.rows.length).toBe(10);
    expect(failedEvents.rows.every((r) => Number(r.n) === 1)).toBe(true);

    const audit = (await b.request('GET', '/_railyard/ledger')).body;
    expect(audit.balanced).toBe(true);
    const final = (await a.request('GET', '/platform/internal-accounts?currency=USD')).body.data[0];
    expect(final.balance.amount).toBe(FUNDED - paid + 5_000);
    expect(final.totalBalance.amount).toBe(FUNDED - paid + 5_000);
  });
});
