import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { platformNowOf } from '../../src/modules/platform/service.js';
import { railStepJob } from '../../src/modules/transactions/service.js';
import { build, ManualClock, type TestApp } from '../helper.js';
import { accountBody } from '../fixtures/accounts.js';
import {
  balances,
  customerWithAccounts,
  eventsOf,
  expectBalancedBooks,
  externalAccount,
  fund,
  fundedUsd,
  platformAccount,
  transferIn,
  transferOut,
} from '../fixtures/money.js';
import { postingKinds } from '../fixtures/quotes.js';

async function world(t: TestApp) {
  const usd = await fundedUsd(t, 1_000_000);
  const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
  const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
  const out1 = (await transferOut(t, usd.id, bank.id, 100)).body;
  await t.advanceClock(60);
  const in1 = (await transferIn(t, bank.id, usd.id, 200)).body;
  await t.advanceClock(60);
  const pending = (await transferOut(t, usd.id, slow.id, 300)).body;
  const customer = await customerWithAccounts(t, 'crm-c001');
  await fund(t, customer.usd.id, 10_000);
  const mine = (await transferOut(t, customer.usd.id, customer.external.id, 400)).body;
  return { usd, bank, slow, out1, in1, pending, customer, mine };
}

const ids = (reply: { body: { data: { id: string }[] } }) => reply.body.data.map((x) => x.id);

describe('GET /transactions', () => {
  it('lists newest first and filters by every parameter the reference declares', async () => {
    const t = await build();
    const w = await world(t);
    const CUSTOMER = w.customer.customer.id;
    const all = await t.api('GET', '/transactions');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ hasMore: false, totalCount: 4 });
    expect(ids(all)).toEqual([w.mine.id, w.pending.id, w.in1.id, w.out1.id]);
    expect(ids(await t.api('GET', '/transactions?sortOrder=asc'))).toEqual([
      w.out1.id,
      w.in1.id,
      w.pending.id,
      w.mine.id,
    ]);

    const q = async (query: string) => ids(await t.api('GET', `/transactions?${query}`));
    expect(await q('type=INCOMING')).toEqual([w.in1.id]);
    expect(await q('type=OUTGOING&sortOrder=asc')).toEqual([w.out1.id, w.pending.id, w.mine.id]);
    expect(await q('status=PROCESSING')).toEqual([w.pending.id]);
    expect(await q('status=COMPLETED&type=OUTGOING')).toEqual([w.mine.id, w.out1.id]);
    expect(await q('status=REFUNDED')).toEqual([]);
    expect(await q(`accountIdentifier=${w.bank.id}`)).toEqual([w.in1.id, w.out1.id]);
    expect(await q(`senderAccountIdentifier=${w.bank.id}`)).toEqual([w.in1.id]);
    expect(await q(`receiverAccountIdentifier=${w.bank.id}`)).toEqual([w.out1.id]);
    expect(await q(`receiverAccountIdentifier=${w.usd.id}`)).toEqual([w.in1.id]);
    expect(await q(`reference=${w.pending.reconciliationInstructions.reference}`)).toEqual([w.pending.id]);
    expect(await q('reference=RY000000000000')).toEqual([]);
    // The platform's own transactions answer to the platform id as customerId.
    expect(await q(`customerId=${t.platformId}`)).toEqual([w.pending.id, w.in1.id, w.out1.id]);
    expect(await q(`customerId=${CUSTOMER}`)).toEqual([w.mine.id]);
    expect(await q(`platformCustomerId=crm-c001`)).toEqual([w.mine.id]);
    expect(await q(`platformCustomerId=${t.platformId}`)).toEqual([w.pending.id, w.in1.id, w.out1.id]);
    expect(await q(`platformCustomerId=${t.platformId}&customerId=${CUSTOMER}`)).toEqual([]);
    expect(w.mine).toMatchObject({ customerId: CUSTOMER, platformCustomerId: 'crm-c001' });

    // Dates are inclusive bounds on createdAt.
    expect(await q(`startDate=${w.in1.createdAt}`)).toEqual([w.mine.id, w.pending.id, w.in1.id]);
    expect(await q(`endDate=${w.in1.createdAt}`)).toEqual([w.in1.id, w.out1.id]);
    expect(await q(`startDate=${w.in1.createdAt}&endDate=${w.in1.createdAt}`)).toEqual([w.in1.id]);
    // Digits past the millisecond count: 0.9 ms after in1 was created excludes it as a start
    // and keeps it as an end; an offset names the same instant.
    const justAfter = w.in1.createdAt.replace(/Z$/, '900Z');
    expect(await q(`startDate=${justAfter}`)).toEqual([w.mine.id, w.pending.id]);
    expect(await q(`endDate=${justAfter}`)).toEqual([w.in1.id, w.out1.id]);
    expect(
      await q(
        `startDate=${w.in1.createdAt.replace(/Z$/, '000%2B00:00')}&endDate=${w.in1.createdAt.replace(/Z$/, '0001Z')}`,
      ),
    ).toEqual([w.in1.id]);
    // Rounded up past the last instant a date can name, the bound still matches nothing.
    expect(await q('startDate=9999-12-31T23:59:59.9995Z')).toEqual([]);
    expect(await q('endDate=9999-12-31T23:59:59.9995Z')).toHaveLength(4);

    const page1 = await t.api('GET', '/transactions?limit=3');
    expect(page1.body).toMatchObject({ hasMore: true, totalCount: 4 });
    const page2 = await t.api('GET', `/transactions?limit=3&cursor=${page1.body.nextCursor}`);
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: w.out1.id })], hasMore: false, totalCount: 4 });

    const asc1 = await t.api('GET', '/transactions?limit=3&sortOrder=asc');
    expect(asc1.body).toMatchObject({ hasMore: true, totalCount: 4 });
    expect(ids(asc1)).toEqual([w.out1.id, w.in1.id, w.pending.id]);
    const asc2 = await t.api('GET', `/transactions?limit=3&sortOrder=asc&cursor=${asc1.body.nextCursor}`);
    expect(asc2.body).toEqual({ data: [expect.objectContaining({ id: w.mine.id })], hasMore: false, totalCount: 4 });

    const other = await t.newPlatform();
    expect((await other.api('GET', '/transactions')).body).toEqual({ data: [], hasMore: false, totalCount: 0 });
  });

  it('pages a filtered list in either order: every match once, in order, nothing else', async () => {
    // Several transactions share each instant, so the order within one rests on the id.
    const clock = new ManualClock(Date.parse('2026-05-04T10:00:00Z'));
    const t = await build({ clock });
    const usd = await fundedUsd(t, 1_000_000);
    const accounts = Object.fromEntries(
      await Promise.all(
        ['000', '002', '003'].map(async (suffix) => [suffix, (await externalAccount(t, 'USD_ACCOUNT', suffix)).id]),
      ),
    );
    const created: { id: string; type: string; status: string }[] = [];
    for (let i = 0; i < 15; i++) {
      if (i % 4 === 0) clock.advance(1_000);
      const suffix = ['000', '002', '003'][i % 3]!;
      const reply =
        i % 5 === 4
          ? await transferIn(t, accounts[suffix]!, usd.id, 100 + i)
          : await transferOut(t, usd.id, accounts[suffix]!, 100 + i);
      expect(reply.status).toBe(201);
      created.push({ id: reply.body.id, type: reply.body.type, status: reply.body.status });
    }
    const matching = (filter: Record<string, string>) =>
      created.filter((x) => Object.entries(filter).every(([k, v]) => x[k as 'type' | 'status'] === v)).map((x) => x.id);
    const walk = async (query: string) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 20; page++) {
        const reply = await t.api('GET', `/transactions?limit=2&${query}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(reply.status).toBe(200);
        seen.push(...ids(reply));
        expect(reply.body.hasMore).toBe(reply.body.nextCursor !== undefined);
        cursor = reply.body.nextCursor;
        if (cursor === undefined) return { seen, totalCount: reply.body.totalCount as number };
      }
      throw new Error(`no last page for ${query}`);
    };
    const filters: Record<string, string>[] = [
      { status: 'FAILED' },
      { type: 'OUTGOING' },
      { status: 'FAILED', type: 'OUTGOING' },
    ];
    for (const filter of filters) {
      const query = new URLSearchParams(filter).toString();
      const expected = matching(filter);
      expect(expected.length).toBeGreaterThan(4);
      const oldestFirst = await walk(`${query}&sortOrder=asc`);
      const newestFirst = await walk(`${query}&sortOrder=desc`);
      expect(oldestFirst, query).toEqual({ seen: expected, totalCount: expected.length });
      expect(newestFirst, query).toEqual({ seen: [...expected].reverse(), totalCount: expected.length });
    }
  });

  it('counts every transaction in totalCount, through refused, replayed and concurrent transfers', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 1_000);
    const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
    const counted = async () =>
      Number(
        (
          await sql<{
            n: string;
          }>`SELECT CAST(COUNT(*) AS TEXT) AS n FROM transactions WHERE platform_id = ${t.platformId}`.execute(
            t.deps.db.k,
          )
        ).rows[0]!.n,
      );
    const total = async () => (await t.api('GET', '/transactions?limit=1')).body.totalCount as number;
    expect(await total()).toBe(0);
    expect((await transferOut(t, usd.id, bank.id, 10, { 'idempotency-key': 'k1' })).status).toBe(201);
    // A replay and a refused transfer write no transaction.
    expect((await transferOut(t, usd.id, bank.id, 10, { 'idempotency-key': 'k1' })).status).toBe(201);
    expect((await transferOut(t, usd.id, bank.id, 1_000_000)).status).toBe(400);
    expect(await total()).toBe(1);
    const replies = await Promise.all(Array.from({ length: 12 }, () => transferOut(t, usd.id, bank.id, 100)));
    const created = replies.filter((r) => r.status === 201).length;
    expect(created).toBe(9);
    expect(await total()).toBe(10);
    expect(await counted()).toBe(10);
    // A filter counts the matching rows.
    expect((await t.api('GET', '/transactions?type=INCOMING')).body.totalCount).toBe(0);
    expect((await t.api('GET', `/transactions?customerId=${t.platformId}`)).body.totalCount).toBe(10);
    const other = await t.newPlatform();
    expect((await other.api('GET', '/transactions')).body.totalCount).toBe(0);
  });

  it('rejects bad filters with every field named', async () => {
    const t = await build();
    const reply = await t.api(
      'GET',
      '/transactions?type=SIDEWAYS&status=LOST&startDate=yesterday&sortOrder=random&limit=500',
    );
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors.map((e: any) => e.field).sort()).toEqual([
      'limit',
      'sortOrder',
      'startDate',
      'status',
      'type',
    ]);
    expect((await t.api('GET', '/transactions?cursor=bogus')).status).toBe(400);
  });

  it('answers 400 for a date-time that RFC 3339 allows but an instant cannot hold (a leap second, an offset of hours alone)', async () => {
    const t = await build();
    const leap = await t.api('GET', '/transactions?startDate=2016-12-31T23:59:60Z');
    expect(leap.status).toBe(400);
    expect(leap.body).toEqual({
      status: 400,
      code: 'INVALID_INPUT',
      message: 'startDate must not be a leap second (second 60): give 59 seconds or the next minute',
      details: {
        errors: [
          {
            field: 'startDate',
            constraint: { format: 'date-time' },
            message: 'must not be a leap second (second 60): give 59 seconds or the next minute',
          },
        ],
      },
    });
    const hoursOnly = await t.api('GET', '/transactions?endDate=2017-01-01T00:00:00-01');
    expect(hoursOnly.status).toBe(400);
    expect(hoursOnly.body.details.errors).toEqual([
      {
        field: 'endDate',
        constraint: { format: 'date-time' },
        message: 'must give its offset from UTC in hours and minutes (Z, ±hh:mm or ±hhmm)',
      },
    ]);
  });
});

describe('date-times whose instant leaves years 0000 to 9999', () => {
  it('are 400s naming the field: an offset may not carry 9999-12-31 into year 10000, nor 0000-01-01 into year -1', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 1_000);
    const paid = (await transferOut(t, usd.id, (await externalAccount(t, 'USD_ACCOUNT')).id, 100)).body;
    const problem = { constraint: { format: 'date-time' }, message: 'must fall between years 0000 and 9999 in UTC' };
    const late = await t.api('GET', `/transactions?endDate=${encodeURIComponent('9999-12-31T23:59:59-23:59')}`);
    expect(late.status).toBe(400);
    expect(late.body.details.errors).toEqual([{ field: 'endDate', ...problem }]);
    const early = await t.api('POST', `/transactions/${paid.id}/confirm`, {
      body: { receiptDeliveryConfirmedAt: '0000-01-01T00:00:00+00:01' },
    });
    expect(early.status).toBe(400);
    expect(early.body.details.errors).toEqual([{ field: 'receiptDeliveryConfirmedAt', ...problem }]);
    expect((await t.api('GET', `/transactions/${paid.id}`)).body.receiptDeliveryConfirmedAt).toBeUndefined();
    // The edges themselves are fine.
    expect(
      (await t.api('GET', `/transactions?endDate=${encodeURIComponent('9999-12-31T23:59:59Z')}`)).body.data.map(
        (tx: any) => tx.id,
      ),
    ).toEqual([paid.id]);
    expect(
      (await t.api('GET', `/transactions?startDate=${encodeURIComponent('0000-01-01T00:00:00Z')}`)).body.data,
    ).toHaveLength(1);
  });
});

describe('GET /transactions/{transactionId}', () => {
  it("answers 404 TRANSACTION_NOT_FOUND for an unknown id or another platform's", async () => {
    const t = await build();
    const other = await t.newPlatform();
    const usd = await platformAccount(other, 'USD');
    const bank = await externalAccount(other, 'USD_ACCOUNT');
    const theirs = (await transferIn(other, bank.id, usd.id, 100)).body;
    for (const id of [theirs.id, 'Transaction:0193f1d2-0000-7000-8000-000000000000']) {
      const reply = await t.api('GET', `/transactions/${id}`);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'TRANSACTION_NOT_FOUND' });
    }
  });
});

describe('POST /transactions/{transactionId}/confirm', () => {
  it('records when the receipt was delivered, now by default, and a repeat overwrites it', async () => {
    const t = await build();
    const usd = await fundedUsd(t);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const tx = (await transferOut(t, usd.id, bank.id, 100)).body;
    expect(tx.receiptDeliveryConfirmedAt).toBeUndefined();
    const now = (await platformNowOf(t.deps, t.platformId)).getTime();
    const confirmed = await t.api('POST', `/transactions/${tx.id}/confirm`);
    expect(confirmed.status).toBe(200);
    const at = Date.parse(confirmed.body.receiptDeliveryConfirmedAt);
    expect(at).toBeGreaterThanOrEqual(now);
    expect(at - now).toBeLessThan(5_000);
    expect(confirmed.body).toMatchObject({ id: tx.id, status: 'COMPLETED' });

    const given = await t.api('POST', `/transactions/${tx.id}/confirm`, {
      body: { receiptDeliveryConfirmedAt: '2025-01-02T03:04:05Z' },
    });
    expect(given.body.receiptDeliveryConfirmedAt).toBe('2025-01-02T03:04:05.000Z');
    expect((await t.api('GET', `/transactions/${tx.id}`)).body.receiptDeliveryConfirmedAt).toBe(
      '2025-01-02T03:04:05.000Z',
    );

    const future = await t.api('POST', `/transactions/${tx.id}/confirm`, {
      body: { receiptDeliveryConfirmedAt: '2999-01-01T00:00:00Z' },
    });
    expect(future.status).toBe(400);
    expect(future.body.details.errors[0].field).toBe('receiptDeliveryConfirmedAt');
    const malformed = await t.api('POST', `/transactions/${tx.id}/confirm`, {
      body: { receiptDeliveryConfirmedAt: 'last tuesday' },
    });
    expect(malformed.body.details.errors[0]).toMatchObject({
      field: 'receiptDeliveryConfirmedAt',
      constraint: { format: 'date-time' },
    });
    expect((await t.api('GET', `/transactions/${tx.id}`)).body.receiptDeliveryConfirmedAt).toBe(
      '2025-01-02T03:04:05.000Z',
    );
    expect((await t.api('POST', '/transactions/Transaction:0193f1d2-0000-7000-8000-000000000000/confirm')).status).toBe(
      404,
    );
  });

  it('answers 400 for a leap second and leaves the confirmation alone; other RFC 3339 spellings are read as the instant they name', async () => {
    const t = await build();
    const usd = await fundedUsd(t);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const tx = (await transferOut(t, usd.id, bank.id, 100)).body;
    const confirm = (at: string) =>
      t.api('POST', `/transactions/${tx.id}/confirm`, { body: { receiptDeliveryConfirmedAt: at } });
    for (const leap of ['2016-12-31T23:59:60Z', '2016-12-31T23:59:60.250Z', '2016-12-31T18:59:60-05:00']) {
      const reply = await confirm(leap);
      expect(reply.status, leap).toBe(400);
      expect(reply.body, leap).toEqual({
        status: 400,
        code: 'INVALID_INPUT',
        message: 'receiptDeliveryConfirmedAt must not be a leap second (second 60): give 59 seconds or the next minute',
        details: {
          errors: [
            {
              field: 'receiptDeliveryConfirmedAt',
              constraint: { format: 'date-time' },
              message: 'must not be a leap second (second 60): give 59 seconds or the next minute',
            },
          ],
        },
      });
    }
    expect((await t.api('GET', `/transactions/${tx.id}`)).body.receiptDeliveryConfirmedAt).toBeUndefined();
    for (const spelling of [
      '2016-12-31t23:59:59z',
      '2016-12-31 23:59:59Z',
      '2017-01-01T00:59:59+0100',
      '2016-12-31T18:59:59-05:00',
    ]) {
      const reply = await confirm(spelling);
      expect(reply.status, spelling).toBe(200);
      expect(reply.body.receiptDeliveryConfirmedAt, spelling).toBe('2016-12-31T23:59:59.000Z');
    }
  });
});

describe('POST /transactions/{transactionId}/cancel', () => {
  it('cancels a pending ACH payout: hold released, refunded, closed COMPLETED; the late rail outcome changes nothing', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 50_000);
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const pending = (await transferOut(t, usd.id, slow.id, 20_000)).body;
    expect(await balances(t, usd.id)).toEqual({ balance: 30_000, totalBalance: 50_000 });
    const cancelled = await t.api('POST', `/transactions/${pending.id}/cancel`, {
      body: { reason: 'customer changed their mind' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'COMPLETED',
      refund: {
        reference: `${pending.reconciliationInstructions.reference}-R`,
        status: 'COMPLETED',
        reason: 'USER_CANCELLATION',
      },
    });
    // Nothing reached the receiver: no failure, and no settlement either.
    expect(cancelled.body.failureReason).toBeUndefined();
    expect(cancelled.body.settledAt).toBeUndefined();
    expect(cancelled.body.refund.initiatedAt).toBe(cancelled.body.refund.settledAt);
    expect(await balances(t, usd.id)).toEqual({ balance: 50_000, totalBalance: 50_000 });
    // The reference's sequence for a cancelled payment: the refund, then COMPLETED.
    expect((await eventsOf(t, pending.id)).map((e) => [e.type, e.data.status, e.data.refund?.status])).toEqual([
      ['OUTGOING_PAYMENT.PROCESSING', 'PROCESSING', undefined],
      ['OUTGOING_PAYMENT.REFUND_PENDING', 'PROCESSING', 'PENDING'],
      ['OUTGOING_PAYMENT.REFUND_COMPLETED', 'PROCESSING', 'COMPLETED'],
      ['OUTGOING_PAYMENT.COMPLETED', 'COMPLETED', 'COMPLETED'],
    ]);
    expect(await postingKinds(t, pending.id)).toEqual(['HOLD', 'RELEASE']);
    // The 30 s timeout still fires, finds the transfer settled, and leaves it alone.
    expect((await t.advanceClock(31)).jobsRun).toBe(1);
    expect((await t.api('GET', `/transactions/${pending.id}`)).body).toEqual(cancelled.body);
    expect(await balances(t, usd.id)).toEqual({ balance: 50_000, totalBalance: 50_000 });
    await expectBalancedBooks(t);
    // Once cancelled it is past cancelling.
    expect((await t.api('POST', `/transactions/${pending.id}/cancel`)).body.code).toBe('TRANSACTION_NOT_CANCELLABLE');
  });

  it('cancels a pending ACH pull: FAILED with COLLECTION_FAILED, the pending credit undone', async () => {
    const t = await build();
    const usd = await platformAccount(t, 'USD');
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const pending = (await transferIn(t, slow.id, usd.id, 900)).body;
    expect(pending.status).toBe('PENDING');
    expect(await balances(t, usd.id)).toEqual({ balance: 0, totalBalance: 900 });
    const cancelled = await t.api('POST', `/transactions/${pending.id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'FAILED', failureReason: 'COLLECTION_FAILED' });
    expect(cancelled.body.refund).toBeUndefined();
    expect(await balances(t, usd.id)).toEqual({ balance: 0, totalBalance: 0 });
  });

  it('answers 409 once settled, 400 for transfers that are not ACH or wire, 404 for unknown ids', async () => {
    const t = await build();
    const usd = await fundedUsd(t);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const done = (await transferOut(t, usd.id, bank.id, 100)).body;
    const settled = await t.api('POST', `/transactions/${done.id}/cancel`);
    expect(settled.status).toBe(409);
    expect(settled.body).toMatchObject({
      status: 409,
      code: 'TRANSACTION_NOT_CANCELLABLE',
      details: { status: 'COMPLETED' },
    });

    const usdb = await platformAccount(t, 'USDB');
    await fund(t, usdb.id, 1_000_000);
    const wallet = await t.api('POST', '/platform/external-accounts', {
      body: { ...accountBody('SPARK_WALLET', '005'), currency: 'USDB' },
    });
    const onChain = (await transferOut(t, usdb.id, wallet.body.id, 1_000)).body;
    expect(onChain.status).toBe('PROCESSING');
    const notBank = await t.api('POST', `/transactions/${onChain.id}/cancel`);
    expect(notBank.status).toBe(400);
    expect(notBank.body).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'transactionId' }] } });

    const rtp = await t.api('POST', '/transfer-out', {
      body: {
        source: { accountId: usd.id },
        destination: { accountId: (await externalAccount(t, 'USD_ACCOUNT', '005')).id, paymentRail: 'RTP' },
        amount: 100,
      },
    });
    expect(rtp.body).toMatchObject({ status: 'PROCESSING', paymentRail: 'RTP' });
    expect((await t.api('POST', `/transactions/${rtp.body.id}/cancel`)).status).toBe(400);

    const unknown = await t.api('POST', '/transactions/Transaction:0193f1d2-0000-7000-8000-000000000000/cancel', {
      body: {},
    });
    expect(unknown.body).toMatchObject({ status: 404, code: 'TRANSACTION_NOT_FOUND' });
  });
});

/** No suffix returns a transfer: the rail reports a return through its job, due `inSeconds` from now, as it would later. */
async function scheduleReturn(t: TestApp, transactionId: string, inSeconds: number): Promise<void> {
  const now = await platformNowOf(t.deps, t.platformId);
  await t.deps.db.transaction((tx) =>
    railStepJob.schedule(tx, {
      platformId: t.platformId,
      payload: { transactionId, outcome: { kind: 'RETURNED', failureReason: 'PAYOUT_RETURNED' } },
      dueAt: new Date(now.getTime() + inSeconds * 1000),
      now,
    }),
  );
}

describe('returned payments (a failure after completion)', () => {
  it('reverses the settlement, fails the payout with PAYOUT_RETURNED and records the refund', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 10_000);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const paid = (await transferOut(t, usd.id, bank.id, 4_000)).body;
    expect(await balances(t, usd.id)).toEqual({ balance: 6_000, totalBalance: 6_000 });
    await scheduleReturn(t, paid.id, 3_600);
    await t.advanceClock(3_601);
    const returned = (await t.api('GET', `/transactions/${paid.id}`)).body;
    expect(returned).toMatchObject({
      status: 'FAILED',
      failureReason: 'PAYOUT_RETURNED',
      settledAt: paid.settledAt,
      refund: {
        status: 'COMPLETED',
        reason: 'TRANSACTION_FAILED',
        reference: `${paid.reconciliationInstructions.reference}-R`,
      },
    });
    expect(await balances(t, usd.id)).toEqual({ balance: 10_000, totalBalance: 10_000 });
    expect((await eventsOf(t, paid.id)).map((e) => e.type)).toEqual([
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
    ]);
    const kinds = await t.deps.db.k
      .selectFrom('ledger_postings')
      .select('kind')
      .where('transaction_id', '=', paid.id)
      .orderBy('id')
      .execute();
    expect(kinds.map((k) => k.kind)).toEqual(['HOLD', 'SETTLE', 'RETURN']);
    await expectBalancedBooks(t);
    // The returned transfer is settled history: not cancellable.
    expect((await t.api('POST', `/transactions/${paid.id}/cancel`)).status).toBe(409);
  });

  it('leaves a cancelled payment alone: it is COMPLETED but never settled, so nothing of it can come back', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 10_000);
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const pending = (await transferOut(t, usd.id, slow.id, 4_000)).body;
    const cancelled = (await t.api('POST', `/transactions/${pending.id}/cancel`)).body;
    expect(cancelled.status).toBe('COMPLETED');
    await scheduleReturn(t, pending.id, 60);
    await t.advanceClock(61);
    // Neither refunded twice nor reversed: the transaction, the balance and the postings are as the cancel left them.
    expect((await t.api('GET', `/transactions/${pending.id}`)).body).toEqual(cancelled);
    expect(await balances(t, usd.id)).toEqual({ balance: 10_000, totalBalance: 10_000 });
    expect(await postingKinds(t, pending.id)).toEqual(['HOLD', 'RELEASE']);
    await expectBalancedBooks(t);
  });
});
