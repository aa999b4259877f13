// Concurrent executes: many executes of one quote give exactly one payment (one 200, the rest
// 409, one HOLD); executes of different quotes from one account never overdraw it; concurrent
// creates with one Idempotency-Key make one quote; sends of one real-time quote pay it once.
// On the store under test (SQLite, or PostgreSQL with DATABASE_URL).

import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { balances, eventsOf, expectBalancedBooks, externalAccount, fundedUsd } from '../fixtures/money.js';
import {
  accountQuoteBody,
  buildAtStart,
  counts,
  createQuote,
  executeQuote,
  postingKinds,
  quoteOf,
} from '../fixtures/quotes.js';

const P = (type: string) => `OUTGOING_PAYMENT.${type}`;

describe('concurrent quote operations', () => {
  it('8 concurrent executes of one quote: exactly one 200, seven 409, one HOLD, balances right', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 100_000);
    const destination = await externalAccount(t, 'MXN_ACCOUNT', '003');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 30_000 }))).body;
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => executeQuote(t, quote.id, { 'idempotency-key': `exec-${i}` })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of replies.filter((r) => r.status === 409))
      expect(r.body).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(replies.find((r) => r.status === 200)!.body.status).toBe('PROCESSING');
    expect(await postingKinds(t, quote.transactionId)).toEqual(['HOLD']);
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([P('PENDING'), P('PROCESSING')]);
    expect(await balances(t, source.id)).toEqual({ balance: 70_000, totalBalance: 100_000 });
    await t.advanceClock(6 * 60);
    expect((await quoteOf(t, quote.id)).status).toBe('COMPLETED');
    expect(await postingKinds(t, quote.transactionId)).toEqual(['HOLD', 'CONVERT', 'PAYOUT']);
    expect(await balances(t, source.id)).toEqual({ balance: 70_000, totalBalance: 70_000 });
    await expectBalancedBooks(t);
  });

  it('8 concurrent executes with one Idempotency-Key: all answer the one execution', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 100_000);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 30_000 }))).body;
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => executeQuote(t, quote.id, { 'idempotency-key': 'one-key' })),
    );
    for (const r of replies) expect(r.status).toBe(200);
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['HOLD', 'CONVERT', 'PAYOUT']);
    expect(await balances(t, source.id)).toEqual({ balance: 70_000, totalBalance: 70_000 });
    await expectBalancedBooks(t);
  });

  it('concurrent executes of different quotes never overdraw the account; the ones that do not fit are 400 INVALID_AMOUNT', async () => {
    const t = await buildAtStart();
    const FUNDED = 100_000;
    const source = await fundedUsd(t, FUNDED);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quotes = [];
    for (let i = 0; i < 12; i++)
      quotes.push((await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 15_000 }))).body);
    const replies = await Promise.all(quotes.map((q) => executeQuote(t, q.id)));
    const ok = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status !== 200);
    // 100,000 covers six payments of 15,000 and not a seventh.
    expect(ok).toHaveLength(6);
    for (const r of ok) expect(r.body.status).toBe('COMPLETED');
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'INVALID_AMOUNT', details: { reason: 'INSUFFICIENT_BALANCE' } });
    }
    expect(await balances(t, source.id)).toEqual({ balance: 10_000, totalBalance: 10_000 });
    const statuses = await Promise.all(quotes.map(async (q) => (await quoteOf(t, q.id)).status));
    expect(statuses.filter((s) => s === 'COMPLETED')).toHaveLength(6);
    expect(statuses.filter((s) => s === 'PENDING')).toHaveLength(6);
    await expectBalancedBooks(t);
  });

  it('concurrent creates with one Idempotency-Key make one quote and answer it to all', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 100_000);
    const destination = await externalAccount(t, 'EUR_ACCOUNT');
    const body = accountQuoteBody(source.id, destination.id);
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => createQuote(t, body, { 'idempotency-key': 'create-once' })),
    );
    for (const r of replies) expect(r.status).toBe(201);
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(await counts(t)).toMatchObject({ quotes: 1, transactions: 1 });
  });

  it('concurrent sends of one real-time-funded quote pay it once', async () => {
    const t = await buildAtStart();
    const customer = await createCustomer(t, individualBody('Jordan Rivera'));
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (
      await createQuote(t, {
        source: { sourceType: 'REALTIME_FUNDING', customerId: customer.id, currency: 'USD' },
        destination: { destinationType: 'ACCOUNT', accountId: destination.id },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 20_000,
      })
    ).body;
    const replies = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.api('POST', '/sandbox/send', { body: { quoteId: quote.id, currencyCode: 'USD' } }),
      ),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    await expectBalancedBooks(t);
  });
});
