// GET /transactions at any size answers totalCount from counts the database keeps (migration
// 0016) and pages from one index per filter. These tests hold both to a full scan: after a
// mix of writes over several days (transfers out and in, the platform's and customers',
// failures at once and after a while, a cancellation, concurrent transfers, many rows on
// one instant), every filter's totalCount equals a COUNT(*) written here with its own
// predicate, and walking the pages in either order yields exactly the scanned rows, in order.

import { type RawBuilder, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { backfillTransactionCounts } from '../../src/db/migrations/0016_list_counts.js';
import { customerWithAccounts, externalAccount, fund, fundedUsd, transferIn, transferOut } from '../fixtures/money.js';
import { build, ManualClock, type TestApp } from '../helper.js';

interface Check {
  /** The query string of the list. */
  query: Record<string, string>;
  /** The same selection, written independently as SQL over the table. */
  where: RawBuilder<unknown>;
}

async function scan(t: TestApp, where: RawBuilder<unknown>): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    SELECT id FROM transactions WHERE platform_id = ${t.platformId} AND ${where}
    ORDER BY created_at, id`.execute(t.deps.db.k);
  return rows.rows.map((row) => row.id);
}

/** Every page of the list in one order: the ids seen and each page's totalCount. */
async function walk(t: TestApp, query: Record<string, string>, order: 'asc' | 'desc', limit: number) {
  const seen: string[] = [];
  const counts = new Set<number>();
  let cursor: string | undefined;
  for (let page = 0; page < 200; page++) {
    const search = new URLSearchParams({ ...query, sortOrder: order, limit: String(limit) });
    if (cursor !== undefined) search.set('cursor', cursor);
    const reply = await t.api('GET', `/transactions?${search}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    seen.push(...reply.body.data.map((x: { id: string }) => x.id));
    counts.add(reply.body.totalCount);
    expect(reply.body.hasMore).toBe(reply.body.nextCursor !== undefined);
    cursor = reply.body.nextCursor;
    if (cursor === undefined) return { seen, counts: [...counts] };
  }
  throw new Error(`no last page for ${JSON.stringify(query)}`);
}

/** Each check's totalCount against its scan; with `pages`, every page in both orders too. */
async function expectListsMatchScans(t: TestApp, checks: Check[], pages = true) {
  for (const check of checks) {
    const expected = await scan(t, check.where);
    const label = JSON.stringify(check.query);
    const first = await t.api('GET', `/transactions?${new URLSearchParams({ ...check.query, limit: '1' })}`);
    expect(first.body.totalCount, label).toBe(expected.length);
    if (!pages) continue;
    // A handful of pages, ending inside runs of rows that share one instant.
    const limit = Math.max(2, Math.ceil(expected.length / 4));
    expect(await walk(t, check.query, 'asc', limit), label).toEqual({ seen: expected, counts: [expected.length] });
    expect(await walk(t, check.query, 'desc', limit), label).toEqual({
      seen: [...expected].reverse(),
      counts: [expected.length],
    });
  }
}

/**
 * Writes over three sandbox days (from 22:00 on the first): transfers out and in, the
 * platform's and two customers', failing at once (002) and after 30 s (005), one cancelled,
 * some concurrent. The manual clock stands still between advances, so rows share instants.
 */
async function world(t: TestApp) {
  const usd = await fundedUsd(t, 100_000_000);
  const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
  const refusing = await externalAccount(t, 'USD_ACCOUNT', '002');
  const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
  const c1 = await customerWithAccounts(t, 'crm-lists-1');
  const c2 = await customerWithAccounts(t, 'crm-lists-2');
  await fund(t, c1.usd.id, 1_000_000);
  await fund(t, c2.usd.id, 1_000_000);
  const created: { id: string; reference: string; createdAt: string }[] = [];
  const ok = (reply: { status: number; body: any }) => {
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    created.push({
      id: reply.body.id,
      reference: reply.body.reconciliationInstructions?.reference,
      createdAt: reply.body.createdAt,
    });
    return reply.body;
  };
  for (let day = 0; day < 3; day++) {
    ok(await transferOut(t, usd.id, bank.id, 100 + day));
    ok(await transferOut(t, usd.id, refusing.id, 200 + day));
    ok(await transferOut(t, usd.id, slow.id, 300 + day));
    ok(await transferIn(t, bank.id, usd.id, 400 + day));
    ok(await transferIn(t, slow.id, usd.id, 500 + day));
    ok(await transferOut(t, c1.usd.id, c1.external.id, 600 + day));
    await t.advanceClock(7);
    ok(await transferOut(t, c2.usd.id, c2.external.id, 700 + day));
    // Concurrent writers: the counts are changed by each in its own transaction.
    for (const reply of await Promise.all([
      transferOut(t, usd.id, bank.id, 800 + day),
      transferOut(t, usd.id, slow.id, 900 + day),
      transferOut(t, c1.usd.id, c1.external.id, 1000 + day),
      transferIn(t, bank.id, usd.id, 1100 + day),
      transferOut(t, c2.usd.id, c2.external.id, 1200 + day),
    ])) {
      ok(reply);
    }
    // A slow payout cancelled while it waits: PROCESSING, then COMPLETED with a refund.
    const cancelled = ok(await transferOut(t, usd.id, slow.id, 1300 + day));
    expect((await t.api('POST', `/transactions/${cancelled.id}/cancel`, { body: {} })).status).toBe(200);
    // The slow ones left fail after 30 s: PROCESSING or PENDING, then FAILED (those made
    // next fail on the next day; the last day's stay pending).
    await t.advanceClock(40);
    ok(await transferOut(t, usd.id, slow.id, 1400 + day));
    ok(await transferIn(t, slow.id, usd.id, 1500 + day));
    if (day < 2) await t.advanceClock(16 * 3600);
  }
  return { usd, bank, refusing, slow, c1, c2, created };
}

function checksOf(t: TestApp, w: Awaited<ReturnType<typeof world>>): Check[] {
  const byTime = [...w.created].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  const firstDay = byTime[0]!.createdAt.slice(0, 10);
  const mid = byTime[Math.floor(byTime.length / 2)]!.createdAt;
  const late = byTime[byTime.length - 4]!.createdAt;
  const nextMidnight = new Date(Date.parse(`${firstDay}T00:00:00.000Z`) + 86_400_000).toISOString();
  const checks: Check[] = [{ query: {}, where: sql`1 = 1` }];
  for (const status of ['COMPLETED', 'FAILED', 'PROCESSING', 'PENDING', 'REFUNDED']) {
    checks.push({ query: { status }, where: sql`status = ${status}` });
  }
  for (const type of ['OUTGOING', 'INCOMING']) checks.push({ query: { type }, where: sql`type = ${type}` });
  checks.push(
    { query: { customerId: t.platformId }, where: sql`customer_id IS NULL` },
    { query: { customerId: w.c1.customer.id }, where: sql`customer_id = ${w.c1.customer.id}` },
    { query: { customerId: 'Customer:nobody' }, where: sql`1 = 0` },
    { query: { platformCustomerId: 'crm-lists-2' }, where: sql`customer_id = ${w.c2.customer.id}` },
    { query: { platformCustomerId: t.platformId }, where: sql`customer_id IS NULL` },
    {
      query: { accountIdentifier: w.usd.id },
      where: sql`(source_account_id = ${w.usd.id} OR destination_account_id = ${w.usd.id})`,
    },
    {
      query: { accountIdentifier: w.bank.id },
      where: sql`(source_account_id = ${w.bank.id} OR destination_account_id = ${w.bank.id})`,
    },
    {
      query: { accountIdentifier: w.c1.usd.id },
      where: sql`(source_account_id = ${w.c1.usd.id} OR destination_account_id = ${w.c1.usd.id})`,
    },
    { query: { senderAccountIdentifier: w.usd.id }, where: sql`source_account_id = ${w.usd.id}` },
    { query: { senderAccountIdentifier: w.slow.id }, where: sql`source_account_id = ${w.slow.id}` },
    { query: { receiverAccountIdentifier: w.bank.id }, where: sql`destination_account_id = ${w.bank.id}` },
    {
      query: { receiverAccountIdentifier: w.c2.external.id },
      where: sql`destination_account_id = ${w.c2.external.id}`,
    },
    { query: { reference: w.created[3]!.reference }, where: sql`id = ${w.created[3]!.id}` },
    // Dates: bounds inside a day, on a midnight, within one day, and across every day.
    { query: { startDate: mid }, where: sql`created_at >= ${mid}` },
    { query: { endDate: mid }, where: sql`created_at <= ${mid}` },
    { query: { startDate: nextMidnight }, where: sql`created_at >= ${nextMidnight}` },
    { query: { endDate: nextMidnight }, where: sql`created_at <= ${nextMidnight}` },
    { query: { startDate: mid, endDate: late }, where: sql`created_at >= ${mid} AND created_at <= ${late}` },
    {
      query: { startDate: byTime[0]!.createdAt, endDate: byTime[1]!.createdAt },
      where: sql`created_at >= ${byTime[0]!.createdAt} AND created_at <= ${byTime[1]!.createdAt}`,
    },
    { query: { startDate: late, endDate: mid }, where: sql`1 = 0` },
    {
      query: { status: 'FAILED', startDate: mid },
      where: sql`status = 'FAILED' AND created_at >= ${mid}`,
    },
    {
      query: { type: 'INCOMING', startDate: nextMidnight, endDate: late },
      where: sql`type = 'INCOMING' AND created_at >= ${nextMidnight} AND created_at <= ${late}`,
    },
    { query: { status: 'COMPLETED', type: 'OUTGOING' }, where: sql`status = 'COMPLETED' AND type = 'OUTGOING'` },
    {
      query: { customerId: w.c1.customer.id, endDate: mid },
      where: sql`customer_id = ${w.c1.customer.id} AND created_at <= ${mid}`,
    },
    {
      query: { accountIdentifier: w.usd.id, status: 'FAILED' },
      where: sql`(source_account_id = ${w.usd.id} OR destination_account_id = ${w.usd.id}) AND status = 'FAILED'`,
    },
  );
  return checks;
}

describe('GET /transactions: totalCount and pages against a full scan', () => {
  it('match for every filter, alone and combined, in both orders, after transitions and concurrent writes', async () => {
    const t = await build({ clock: new ManualClock(Date.parse('2026-03-01T22:00:00.000Z')) });
    const w = await world(t);
    // The mix reached every status a filter asks for, over three days.
    const statuses = await sql<{ status: string }>`
      SELECT DISTINCT status FROM transactions WHERE platform_id = ${t.platformId}`.execute(t.deps.db.k);
    expect(statuses.rows.map((r) => r.status).sort()).toEqual(['COMPLETED', 'FAILED', 'PENDING', 'PROCESSING']);
    const days = new Set(w.created.map((x) => x.createdAt.slice(0, 10)));
    expect(days.size).toBe(3);
    await expectListsMatchScans(t, checksOf(t, w));

    // The pending ones settle (status transitions only), and the counts follow.
    await t.advanceClock(60);
    await expectListsMatchScans(t, checksOf(t, w), false);

    // Another platform's rows are neither listed nor counted.
    const other = await t.newPlatform();
    expect((await other.api('GET', '/transactions?status=COMPLETED')).body).toEqual({
      data: [],
      hasMore: false,
      totalCount: 0,
    });
  });

  it('stay exact when a counted column other than the status changes, and when the counts are rebuilt from the rows', async () => {
    const t = await build({ clock: new ManualClock(Date.parse('2026-03-01T22:00:00.000Z')) });
    const w = await world(t);
    // No route changes these columns; the triggers count any writer's change all the same.
    const moved = w.created[0]!.id;
    await sql`
      UPDATE transactions SET customer_id = ${w.c2.customer.id}, platform_customer_id = 'crm-lists-2',
        source_account_id = ${w.c2.usd.id}, destination_account_id = ${w.c2.usd.id}, type = 'INCOMING',
        status = 'REFUNDED', created_at = '2026-03-05T01:02:03.004Z'
      WHERE id = ${moved}`.execute(t.deps.db.k);
    const checks = [
      ...checksOf(t, w),
      { query: { status: 'REFUNDED' }, where: sql`status = 'REFUNDED'` },
      {
        query: { accountIdentifier: w.c2.usd.id },
        where: sql`(source_account_id = ${w.c2.usd.id} OR destination_account_id = ${w.c2.usd.id})`,
      },
      { query: { startDate: '2026-03-05T00:00:00Z' }, where: sql`created_at >= '2026-03-05T00:00:00.000Z'` },
    ];
    await expectListsMatchScans(t, checks, false);
    // The migration's count of a store that already has rows gives the same counts.
    await t.deps.db.k.transaction().execute((tx) => backfillTransactionCounts(tx as never));
    await expectListsMatchScans(t, checks, false);
  });
});
