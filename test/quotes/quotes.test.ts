// POST /quotes and GET /quotes/{id}: the quote's shape, validation (every invalid field at
// once, nothing written after a rejection), expiry by rail, idempotent create and execute,
// immediatelyExecute, and pulls from an external bank account.

import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import {
  balances,
  customerWithAccounts,
  eventsOf,
  expectBalancedBooks,
  externalAccount,
  fund,
  fundedUsd,
  platformAccount,
} from '../fixtures/money.js';
import {
  accountQuoteBody,
  buildAtStart,
  convertedFloor,
  counts,
  createQuote,
  currency,
  executeQuote,
  feesOf,
  postingKinds,
  quoteOf,
  shownRate,
  START,
  systemAccount,
  transactionOf,
} from '../fixtures/quotes.js';
import type { TestApp } from '../helper.js';

const P = (type: string) => `OUTGOING_PAYMENT.${type}`;

async function setup(destinationType = 'MXN_ACCOUNT', suffix = '000', funded = 1_000_000) {
  const t = await buildAtStart();
  const source = await fundedUsd(t, funded);
  const destination = await externalAccount(t, destinationType, suffix);
  return { t, source, destination };
}

async function expectNothingWritten(
  t: TestApp,
  before: { quotes: number; transactions: number; postings: number },
  sourceId?: string,
  funded?: number,
) {
  expect(await counts(t)).toEqual(before);
  if (sourceId !== undefined) expect(await balances(t, sourceId)).toEqual({ balance: funded, totalBalance: funded });
}

describe('POST /quotes', () => {
  it('answers 201 PENDING with the locked offer, and GET answers the same quote', async () => {
    const { t, source, destination } = await setup();
    const reply = await createQuote(
      t,
      accountQuoteBody(source.id, destination.id, {
        amount: 10_000,
        extra: { remittanceInformation: 'INV-2025-118', purposeOfPayment: 'GOODS_OR_SERVICES' },
      }),
    );
    expect(reply.status).toBe(201);
    const rate = shownRate('USD', 'MXN', START);
    const fees = feesOf('USD', 10_000n, START);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^Quote:[0-9a-f-]{36}$/),
      status: 'PENDING',
      createdAt: START.toISOString(),
      expiresAt: new Date(START.getTime() + 15 * 60 * 1000).toISOString(),
      source: { sourceType: 'ACCOUNT', accountId: source.id },
      destination: { destinationType: 'ACCOUNT', accountId: destination.id },
      sendingCurrency: currency('USD'),
      receivingCurrency: currency('MXN'),
      totalSendingAmount: 10_000,
      totalReceivingAmount: Number(convertedFloor(10_000n - fees.all, rate, 'USD', 'MXN')),
      exchangeRate: rate,
      feesIncluded: Number(fees.all),
      platformFeesIncluded: 0,
      transactionId: expect.stringMatching(/^Transaction:[0-9a-f-]{36}$/),
      rateDetails: {
        counterpartyMultiplier: expect.any(Number),
        counterpartyFixedFee: 0,
        gridApiMultiplier: expect.any(Number),
        gridApiFixedFee: 10,
        gridApiVariableFeeRate: 0.003,
        gridApiVariableFeeAmount: 30,
      },
    });
    expect(reply.body.paymentInstructions).toBeUndefined();
    expect(reply.body.scaChallenge).toBeUndefined();
    expect(await quoteOf(t, reply.body.id)).toEqual(reply.body);
    // The transaction exists from creation, PENDING, with the remittance details; nothing moved.
    const tx = await transactionOf(t, reply.body.transactionId);
    expect(tx).toMatchObject({
      status: 'PENDING',
      quoteId: reply.body.id,
      sentAmount: { amount: 10_000 },
      receivedAmount: { amount: reply.body.totalReceivingAmount },
      paymentRail: 'SPEI',
    });
    expect(tx.settledAt).toBeUndefined();
    expect((await eventsOf(t, tx.id)).map((e) => e.type)).toEqual([P('PENDING')]);
    expect(await postingKinds(t, tx.id)).toEqual([]);
    expect(await balances(t, source.id)).toEqual({ balance: 1_000_000, totalBalance: 1_000_000 });
  });

  it("answers 404 QUOTE_NOT_FOUND for an unknown quote and for another platform's", async () => {
    const { t, source, destination } = await setup();
    const other = await t.newPlatform();
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    for (const [tenant, id] of [
      [t, 'Quote:0193f1d2-0000-7000-8000-000000000000'],
      [other, quote.id],
    ] as const) {
      const reply = await tenant.api('GET', `/quotes/${id}`);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'QUOTE_NOT_FOUND' });
      const execute = await executeQuote(tenant, id);
      expect(execute.status).toBe(404);
      expect(execute.body.code).toBe('QUOTE_NOT_FOUND');
    }
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
  });
});

describe('POST /quotes validation', () => {
  it('lists every invalid field at once and writes nothing', async () => {
    const { t, source, destination } = await setup();
    const before = await counts(t);
    const reply = await createQuote(t, {
      source: { sourceType: 'ACCOUNT' },
      destination: { destinationType: 'ACCOUNT', accountId: destination.id, paymentRail: 'CARRIER_PIGEON' },
      lockedCurrencySide: 'BOTH',
      lockedCurrencyAmount: 9_000_000_000_000_001,
      remittanceInformation: 'x'.repeat(81),
      purposeOfPayment: 'BRIBE',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors.map((e: any) => e.field).sort()).toEqual([
      'destination.paymentRail',
      'lockedCurrencyAmount',
      'lockedCurrencySide',
      'purposeOfPayment',
      'remittanceInformation',
      'source.accountId',
    ]);
    await expectNothingWritten(t, before, source.id, 1_000_000);
  });

  it('names what the schema refuses and what the service refuses in the same 400', async () => {
    const { t, source, destination } = await setup();
    const before = await counts(t);
    // The schema refuses the remittance text; the service refuses TOTP and the UMA address.
    const mixed = await createQuote(t, {
      ...accountQuoteBody(source.id, destination.id, {
        extra: { scaFactor: 'TOTP', remittanceInformation: 'r'.repeat(81) },
      }),
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: 'not-an-address' },
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.details.errors.map((e: any) => e.field).sort()).toEqual([
      'destination.umaAddress',
      'lookupId',
      'remittanceInformation',
      'scaFactor',
    ]);
    // Both sides unusable: both named, not only the source.
    const unknown = await createQuote(
      t,
      accountQuoteBody(
        'InternalAccount:0193f1d2-0000-7000-8000-000000000000',
        'ExternalAccount:0193f1d2-0000-7000-8000-000000000001',
      ),
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.errors.map((e: any) => e.field).sort()).toEqual([
      'destination.accountId',
      'source.accountId',
    ]);
    // A header the schema refuses is named along with the body's fields.
    const withKey = await t.api('POST', '/quotes', {
      body: accountQuoteBody(source.id, destination.id, { extra: { remittanceInformation: 'r'.repeat(81) } }),
      headers: { 'idempotency-key': 'k'.repeat(256) },
    });
    expect(withKey.status).toBe(400);
    expect(withKey.body.details.errors.map((e: any) => e.field).sort()).toEqual([
      'idempotency-key',
      'remittanceInformation',
    ]);
    // A body of the wrong type altogether is named as such.
    const list = await t.api('POST', '/quotes', { body: [1, 2] });
    expect(list.status).toBe(400);
    expect(list.body.details.errors.map((e: any) => e.field)).toContain('body');
    await expectNothingWritten(t, before, source.id, 1_000_000);
  });

  it.each([
    ['zero', 0],
    ['negative', -5],
    ['a fraction', 10.5],
    ['past the 9e15 maximum', 9_000_000_000_000_001],
  ])('refuses a lockedCurrencyAmount that is %s', async (_what, amount) => {
    const { t, source, destination } = await setup();
    const reply = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount }));
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors.map((e: any) => e.field)).toEqual(['lockedCurrencyAmount']);
    expect(await counts(t)).toMatchObject({ quotes: 0, transactions: 0 });
  });

  it('accepts exactly 80 characters of remittanceInformation and refuses 81', async () => {
    const { t, source, destination } = await setup();
    expect(
      (
        await createQuote(
          t,
          accountQuoteBody(source.id, destination.id, { extra: { remittanceInformation: 'r'.repeat(80) } }),
        )
      ).status,
    ).toBe(201);
    const long = await createQuote(
      t,
      accountQuoteBody(source.id, destination.id, { extra: { remittanceInformation: 'r'.repeat(81) } }),
    );
    expect(long.status).toBe(400);
    expect(long.body.details.errors.map((e: any) => e.field)).toEqual(['remittanceInformation']);
  });

  it('refuses scaFactor TOTP, on create and on execute', async () => {
    const { t, source, destination } = await setup();
    const reply = await createQuote(t, accountQuoteBody(source.id, destination.id, { extra: { scaFactor: 'TOTP' } }));
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'scaFactor' })]);
    expect(await counts(t)).toMatchObject({ quotes: 0, transactions: 0 });
    const quote = (
      await createQuote(t, accountQuoteBody(source.id, destination.id, { extra: { scaFactor: 'SMS_OTP' } }))
    ).body;
    const execute = await executeQuote(t, quote.id, {}, { scaFactor: 'TOTP' });
    expect(execute.status).toBe(400);
    expect(execute.body.details.errors).toEqual([expect.objectContaining({ field: 'scaFactor' })]);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
  });

  it('refuses a same-currency pair with INVALID_CURRENCY pointing to transfer-out', async () => {
    const { t, source, destination } = await setup('USD_ACCOUNT');
    const before = await counts(t);
    const reply = await createQuote(t, accountQuoteBody(source.id, destination.id));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ status: 400, code: 'INVALID_CURRENCY' });
    expect(reply.body.message).toContain('transfer-out');
    await expectNothingWritten(t, before, source.id, 1_000_000);
  });

  it('requires purposeOfPayment for an INR destination', async () => {
    const { t, source, destination } = await setup('INR_ACCOUNT');
    const reply = await createQuote(t, accountQuoteBody(source.id, destination.id));
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'purposeOfPayment' })]);
    expect(await counts(t)).toMatchObject({ quotes: 0, transactions: 0 });
    const ok = await createQuote(
      t,
      accountQuoteBody(source.id, destination.id, { extra: { purposeOfPayment: 'FAMILY_SUPPORT' } }),
    );
    expect(ok.status).toBe(201);
    expect(ok.body.receivingCurrency).toEqual(currency('INR'));
  });

  it('accepts platformFeeOverride only when the source currency is USD', async () => {
    const t = await buildAtStart();
    const usdc = await platformAccount(t, 'USDC');
    await fund(t, usdc.id, 100_000_000);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const before = await counts(t);
    const override = { platformFixedFee: { amount: 50, currency: 'USD' }, platformVariableFeeBps: 25 };
    const reply = await createQuote(
      t,
      accountQuoteBody(usdc.id, destination.id, { amount: 10_000_000, extra: { platformFeeOverride: override } }),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'platformFeeOverride' })]);
    expect(await counts(t)).toEqual(before);
    // From USD the fixed fee must be in USD too.
    const usd = await fundedUsd(t);
    const wrongCurrency = await createQuote(
      t,
      accountQuoteBody(usd.id, destination.id, {
        extra: { platformFeeOverride: { ...override, platformFixedFee: { amount: 50, currency: 'EUR' } } },
      }),
    );
    expect(wrongCurrency.status).toBe(400);
    expect(wrongCurrency.body.details.errors).toEqual([
      expect.objectContaining({ field: 'platformFeeOverride.platformFixedFee.currency' }),
    ]);
    const ok = await createQuote(
      t,
      accountQuoteBody(usd.id, destination.id, { extra: { platformFeeOverride: override } }),
    );
    expect(ok.status).toBe(201);
    expect(ok.body.platformFeesIncluded).toBe(50 + 25);
  });

  it('answers 400 naming the field for an unknown source or destination, or one of another platform (no 404)', async () => {
    const { t, source, destination } = await setup();
    const other = await t.newPlatform();
    const theirSource = await platformAccount(other, 'USD');
    const theirDestination = await externalAccount(other, 'MXN_ACCOUNT');
    const before = await counts(t);
    for (const [from, to, field] of [
      ['InternalAccount:0193f1d2-0000-7000-8000-000000000000', destination.id, 'source.accountId'],
      [theirSource.id, destination.id, 'source.accountId'],
      ['ExternalAccount:0193f1d2-0000-7000-8000-000000000000', destination.id, 'source.accountId'],
      [source.id, 'ExternalAccount:0193f1d2-0000-7000-8000-000000000000', 'destination.accountId'],
      [source.id, theirDestination.id, 'destination.accountId'],
      [source.id, source.id, 'destination.accountId'],
    ] as const) {
      const reply = await createQuote(t, accountQuoteBody(from, to));
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('INVALID_INPUT');
      expect(reply.body.details.errors).toEqual([expect.objectContaining({ field })]);
    }
    await expectNothingWritten(t, before, source.id, 1_000_000);
  });

  it('refuses immediatelyExecute with a REALTIME_FUNDING source', async () => {
    const t = await buildAtStart();
    const customer = await createCustomer(t, individualBody('Jordan Rivera'));
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const reply = await createQuote(t, {
      source: { sourceType: 'REALTIME_FUNDING', customerId: customer.id, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: destination.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
      immediatelyExecute: true,
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'immediatelyExecute' })]);
    expect(await counts(t)).toMatchObject({ quotes: 0, transactions: 0 });
  });

  it('refuses immediatelyExecute from an embedded wallet', async () => {
    const t = await buildAtStart();
    const { customer } = await customerWithAccounts(t);
    const wallets = await t.api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USDB`,
    );
    const wallet = wallets.body.data[0];
    expect(wallet.type).toBe('EMBEDDED_WALLET');
    await fund(t, wallet.id, 10_000_000);
    const destination = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('MXN_ACCOUNT'), customerId: customer.id },
    });
    const reply = await createQuote(
      t,
      accountQuoteBody(wallet.id, destination.body.id, { amount: 1_000_000, extra: { immediatelyExecute: true } }),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'immediatelyExecute' })]);
    expect(await counts(t)).toMatchObject({ quotes: 0 });
  });

  it("refuses an amount whose fees take it all (AMOUNT_OUT_OF_RANGE) and one past the platform's limit (TRANSACTION_SIZE_LIMIT_EXCEEDED)", async () => {
    const { t, source, destination } = await setup();
    const before = await counts(t);
    // Grid's fixed fee is 10 cents and the variable fee rounds up to 1 cent: 11 cents buys nothing.
    const tiny = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 11 }));
    expect(tiny.status).toBe(400);
    expect(tiny.body).toMatchObject({
      code: 'AMOUNT_OUT_OF_RANGE',
      details: { errors: [{ field: 'lockedCurrencyAmount' }] },
    });
    const huge = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 100_000_001 }));
    expect(huge.status).toBe(400);
    expect(huge.body).toMatchObject({ code: 'TRANSACTION_SIZE_LIMIT_EXCEEDED', details: { maxAmount: 100_000_000 } });
    await expectNothingWritten(t, before, source.id, 1_000_000);
    // 12 cents is the smallest amount that receives something.
    const smallest = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 12 }));
    expect(smallest.status).toBe(201);
    expect(smallest.body.feesIncluded).toBe(11);
    expect(smallest.body.totalReceivingAmount).toBe(
      Number(convertedFloor(1n, smallest.body.exchangeRate, 'USD', 'MXN')),
    );
  });

  it('refuses an execute the balance does not cover (400 INVALID_AMOUNT) and leaves the quote executable', async () => {
    const { t, source, destination } = await setup('MXN_ACCOUNT', '000', 9_999);
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 10_000 }))).body;
    const reply = await executeQuote(t, quote.id);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      code: 'INVALID_AMOUNT',
      details: { reason: 'INSUFFICIENT_BALANCE', availableBalance: 9_999 },
    });
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
    expect(await balances(t, source.id)).toEqual({ balance: 9_999, totalBalance: 9_999 });
    await fund(t, source.id, 1);
    expect((await executeQuote(t, quote.id)).body.status).toBe('COMPLETED');
    expect(await balances(t, source.id)).toEqual({ balance: 0, totalBalance: 0 });
    await expectBalancedBooks(t);
  });
});

describe('quote expiry', () => {
  it('a standard corridor expires after 15 minutes: EXPIRED by the job, QUOTE_EXPIRED, event, execute is a 409', async () => {
    const { t, source, destination } = await setup();
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    expect(Date.parse(quote.expiresAt) - Date.parse(quote.createdAt)).toBe(15 * 60 * 1000);
    await t.advanceClock(15 * 60 - 1);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    await t.advanceClock(1);
    expect((await quoteOf(t, quote.id)).status).toBe('EXPIRED');
    const tx = await transactionOf(t, quote.transactionId);
    expect(tx).toMatchObject({ status: 'EXPIRED', failureReason: 'QUOTE_EXPIRED' });
    expect((await eventsOf(t, quote.transactionId)).map((e) => [e.type, e.data.status])).toEqual([
      [P('PENDING'), 'PENDING'],
      [P('EXPIRED'), 'EXPIRED'],
    ]);
    const execute = await executeQuote(t, quote.id);
    expect(execute.status).toBe(409);
    expect(execute.body).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
    expect(await balances(t, source.id)).toEqual({ balance: 1_000_000, totalBalance: 1_000_000 });
    await expectBalancedBooks(t);
  });

  it('an execute at expiresAt is refused even before the expiry job has run', async () => {
    const { t, source, destination } = await setup();
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    // Move the clock without running jobs: straight through the store, as a paused poller would leave it.
    await t.deps.db.k
      .updateTable('platforms')
      .set({ clock_offset_ms: 15 * 60 * 1000 } as never)
      .where('id', '=', t.platformId)
      .execute();
    t.deps.authCache?.clear();
    const execute = await executeQuote(t, quote.id);
    expect(execute.status).toBe(409);
    expect(execute.body.code).toBe('CONFLICT');
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
  });

  it.each([
    ['EUR over SEPA (standard)', 'EUR_ACCOUNT', undefined, 15],
    ['EUR over SEPA_INSTANT', 'EUR_ACCOUNT', 'SEPA_INSTANT', 5],
    ['a Spark wallet', 'SPARK_WALLET', undefined, 5],
    ['a Lightning address', 'LIGHTNING', undefined, 5],
  ])('a quote to %s lives %i minutes', async (_what, type, rail, minutes) => {
    const { t, source, destination } = await setup(type);
    const body = accountQuoteBody(source.id, destination.id, { amount: 50_000 });
    if (rail !== undefined) (body.destination as Record<string, unknown>).paymentRail = rail;
    const reply = await createQuote(t, body);
    expect(reply.status).toBe(201);
    expect(Date.parse(reply.body.expiresAt) - Date.parse(reply.body.createdAt)).toBe(minutes * 60 * 1000);
    await t.advanceClock(minutes * 60);
    expect((await quoteOf(t, reply.body.id)).status).toBe('EXPIRED');
  });

  it('an executed quote does not expire', async () => {
    const { t, source, destination } = await setup('MXN_ACCOUNT', '003');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    expect((await executeQuote(t, quote.id)).body.status).toBe('PROCESSING');
    await t.advanceClock(15 * 60);
    expect((await quoteOf(t, quote.id)).status).toBe('COMPLETED');
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PROCESSING'),
      P('COMPLETED'),
    ]);
  });
});

describe('idempotency', () => {
  it('the same Idempotency-Key and body answer the same response byte for byte, and make one quote', async () => {
    const { t, source, destination } = await setup();
    const body = accountQuoteBody(source.id, destination.id);
    const first = await createQuote(t, body, { 'idempotency-key': 'quote-key-1' });
    expect(first.status).toBe(201);
    await t.advanceClock(30);
    const second = await createQuote(t, body, { 'idempotency-key': 'quote-key-1' });
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(await counts(t)).toMatchObject({ quotes: 1, transactions: 1 });
    // Another key makes another quote.
    const third = await createQuote(t, body, { 'idempotency-key': 'quote-key-2' });
    expect(third.body.id).not.toBe(first.body.id);
    expect(await counts(t)).toMatchObject({ quotes: 2, transactions: 2 });
  });

  it('refuses the same key with a different body', async () => {
    const { t, source, destination } = await setup();
    await createQuote(t, accountQuoteBody(source.id, destination.id), { 'idempotency-key': 'quote-key-3' });
    const reply = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 20_000 }), {
      'idempotency-key': 'quote-key-3',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'Idempotency-Key' })]);
    expect(await counts(t)).toMatchObject({ quotes: 1 });
  });

  it("a second execute is a 409; a replay with the execute's key answers the first response", async () => {
    const { t, source, destination } = await setup();
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    const first = await executeQuote(t, quote.id, { 'idempotency-key': 'exec-1' });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('COMPLETED');
    const replay = await executeQuote(t, quote.id, { 'idempotency-key': 'exec-1' });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    const again = await executeQuote(t, quote.id);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 409, code: 'CONFLICT' });
    const otherKey = await executeQuote(t, quote.id, { 'idempotency-key': 'exec-2' });
    expect(otherKey.status).toBe(409);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['HOLD', 'CONVERT', 'PAYOUT']);
    expect(await balances(t, source.id)).toEqual({ balance: 990_000, totalBalance: 990_000 });
    await expectBalancedBooks(t);
  });
});

describe('immediatelyExecute and pull sources', () => {
  it('immediatelyExecute from an internal account answers 201 with the quote executed', async () => {
    const { t, source, destination } = await setup();
    const reply = await createQuote(
      t,
      accountQuoteBody(source.id, destination.id, { extra: { immediatelyExecute: true } }),
    );
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe('COMPLETED');
    expect(await quoteOf(t, reply.body.id)).toEqual(reply.body);
    expect((await eventsOf(t, reply.body.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PROCESSING'),
      P('COMPLETED'),
    ]);
    expect(await postingKinds(t, reply.body.transactionId)).toEqual(['HOLD', 'CONVERT', 'PAYOUT']);
    expect(await balances(t, source.id)).toEqual({ balance: 990_000, totalBalance: 990_000 });
    expect((await executeQuote(t, reply.body.id)).status).toBe(409);
    await expectBalancedBooks(t);
  });

  it('converts into another internal account of the platform: USD to USDC, credited at once, no rail', async () => {
    const { t, source } = await setup();
    const usdc = await platformAccount(t, 'USDC');
    const reply = await createQuote(
      t,
      accountQuoteBody(source.id, usdc.id, { amount: 10_000, extra: { immediatelyExecute: true } }),
    );
    expect(reply.status).toBe(201);
    const quote = reply.body;
    expect(quote).toMatchObject({
      status: 'COMPLETED',
      destination: { destinationType: 'ACCOUNT', accountId: usdc.id },
      receivingCurrency: { code: 'USDC', decimals: 6 },
    });
    // Instant: the quote lived for 5 minutes.
    expect(Date.parse(quote.expiresAt) - Date.parse(quote.createdAt)).toBe(5 * 60 * 1000);
    // USD (2 decimals) to USDC (6): receiving = floor((sending - fees) x rate x 10^4).
    expect(BigInt(quote.totalReceivingAmount)).toBe(
      convertedFloor(BigInt(10_000 - quote.feesIncluded), quote.exchangeRate, 'USD', 'USDC'),
    );
    expect(await postingKinds(t, quote.transactionId)).toEqual(['HOLD', 'CONVERT', 'PAYOUT']);
    expect(await balances(t, source.id)).toEqual({ balance: 990_000, totalBalance: 990_000 });
    expect(await balances(t, usdc.id, 'USDC')).toEqual({
      balance: quote.totalReceivingAmount,
      totalBalance: quote.totalReceivingAmount,
    });
    expect(await transactionOf(t, quote.transactionId)).toMatchObject({
      status: 'COMPLETED',
      paymentRail: null,
      railSelectionMode: null,
      destination: { destinationType: 'ACCOUNT', accountId: usdc.id, currency: 'USDC' },
      receivedAmount: { amount: quote.totalReceivingAmount },
    });
    const usdcEvents = await eventsOf(t, usdc.id);
    expect(usdcEvents.map((e) => [e.type, e.data.balance.amount])).toEqual([
      ['INTERNAL_ACCOUNT.BALANCE_UPDATED', quote.totalReceivingAmount],
    ]);
    await expectBalancedBooks(t);
  });

  it('an internal destination takes no paymentRail and no lookupId, and is not the source itself', async () => {
    const { t, source } = await setup();
    const usdc = await platformAccount(t, 'USDC');
    const before = await counts(t);
    const withRail = await createQuote(t, {
      ...accountQuoteBody(source.id, usdc.id),
      destination: { destinationType: 'ACCOUNT', accountId: usdc.id, paymentRail: 'ACH' },
      lookupId: 'Lookup:x',
    });
    expect(withRail.status).toBe(400);
    expect(withRail.body.details.errors.map((e: any) => e.field)).toEqual(['destination.paymentRail', 'lookupId']);
    const itself = await createQuote(t, accountQuoteBody(source.id, source.id));
    expect(itself.status).toBe(400);
    expect(itself.body.details.errors).toEqual([
      expect.objectContaining({ field: 'destination.accountId', message: 'is the source account' }),
    ]);
    await expectNothingWritten(t, before, source.id, 1_000_000);
  });

  it('immediatelyExecute the balance does not cover is refused and writes nothing', async () => {
    const { t, source, destination } = await setup('MXN_ACCOUNT', '000', 5_000);
    const before = await counts(t);
    const reply = await createQuote(
      t,
      accountQuoteBody(source.id, destination.id, { amount: 10_000, extra: { immediatelyExecute: true } }),
    );
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_AMOUNT');
    await expectNothingWritten(t, before, source.id, 5_000);
  });

  it('pulls from an ACTIVE external bank account to an MXN account: completes through SUSPENSE, books balanced', async () => {
    const t = await buildAtStart();
    const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
    expect(bank.status).toBe('ACTIVE');
    const destination = await externalAccount(t, 'MXN_ACCOUNT', '000');
    const reply = await createQuote(
      t,
      accountQuoteBody(bank.id, destination.id, { amount: 25_000, extra: { immediatelyExecute: true } }),
    );
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      status: 'COMPLETED',
      source: { sourceType: 'ACCOUNT', accountId: bank.id },
      totalSendingAmount: 25_000,
    });
    expect(reply.body.paymentInstructions).toBeUndefined();
    const tx = await transactionOf(t, reply.body.transactionId);
    expect(tx).toMatchObject({
      status: 'COMPLETED',
      source: { sourceType: 'ACCOUNT', accountId: bank.id, currency: 'USD' },
    });
    expect(await postingKinds(t, tx.id)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 0n, held: 0n });
    expect(await systemAccount(t, 'FEES', 'USD')).toEqual({ available: BigInt(reply.body.feesIncluded), held: 0n });
    await expectBalancedBooks(t);
  });

  it('a pull whose payout fails is refunded to the bank account', async () => {
    const t = await buildAtStart();
    const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
    const destination = await externalAccount(t, 'MXN_ACCOUNT', '002');
    const quote = (await createQuote(t, accountQuoteBody(bank.id, destination.id, { amount: 25_000 }))).body;
    const reply = await executeQuote(t, quote.id);
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe('FAILED');
    const tx = await transactionOf(t, quote.transactionId);
    expect(tx).toMatchObject({
      status: 'FAILED',
      failureReason: 'QUOTE_EXECUTION_FAILED',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
    });
    expect(await postingKinds(t, tx.id)).toEqual(['FUNDING_RECEIVED', 'REFUND']);
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 0n, held: 0n });
    await expectBalancedBooks(t);
  });

  it('a quote payment still PROCESSING over ACH can be cancelled: refunded (USER_CANCELLATION), closed COMPLETED, the late outcome ignored', async () => {
    const t = await buildAtStart();
    const usdc = await platformAccount(t, 'USDC');
    await fund(t, usdc.id, 100_000_000);
    const bank = await externalAccount(t, 'USD_ACCOUNT', '003');
    const quote = (await createQuote(t, accountQuoteBody(usdc.id, bank.id, { amount: 30_000_000 }))).body;
    expect((await executeQuote(t, quote.id)).body.status).toBe('PROCESSING');
    const cancelled = await t.api('POST', `/transactions/${quote.transactionId}/cancel`, {
      body: { reason: 'wrong beneficiary' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'COMPLETED',
      refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
    });
    expect(cancelled.body.settledAt).toBeUndefined();
    expect((await quoteOf(t, quote.id)).status).toBe('COMPLETED');
    expect(await balances(t, usdc.id, 'USDC')).toEqual({ balance: 100_000_000, totalBalance: 100_000_000 });
    // The payout the 003 timeline had planned for now finds the payment closed: nothing is converted or paid.
    await t.advanceClock(6 * 60);
    expect(await transactionOf(t, quote.transactionId)).toEqual(cancelled.body);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['HOLD', 'RELEASE']);
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PROCESSING'),
      P('REFUND_PENDING'),
      P('REFUND_COMPLETED'),
      P('COMPLETED'),
    ]);
    // A quote not yet executed has nothing to cancel.
    const pending = (await createQuote(t, accountQuoteBody(usdc.id, bank.id, { amount: 30_000_000 }))).body;
    const early = await t.api('POST', `/transactions/${pending.transactionId}/cancel`, { body: {} });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('TRANSACTION_NOT_CANCELLABLE');
    await expectBalancedBooks(t);
  });

  it('refuses a source.customerId that does not own the source account', async () => {
    const t = await buildAtStart();
    const { usd } = await customerWithAccounts(t);
    const other = await createCustomer(t, individualBody('Avery Quinn'));
    await fund(t, usd.id, 50_000);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const body = accountQuoteBody(usd.id, destination.id);
    const reply = await createQuote(t, { ...body, source: { ...body.source, customerId: other.id } });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'source.customerId' })]);
  });

  it('refuses a wallet as a pull source', async () => {
    const t = await buildAtStart();
    const wallet = await externalAccount(t, 'SPARK_WALLET');
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const reply = await createQuote(t, accountQuoteBody(wallet.id, destination.id, { amount: 100_000 }));
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'source.accountId' })]);
  });
});

describe('permissions of the quote operations', () => {
  it('creating, executing, authorizing and paying a quote need TRANSACT; reading needs only VIEW', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 1_000_000);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const token = async (permissions: string[]) => {
      const created = await t.api('POST', '/tokens', { body: { name: permissions.join('+'), permissions } });
      return { username: created.body.clientId, password: created.body.clientSecret };
    };
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    const realtime = (
      await createQuote(t, {
        source: { sourceType: 'REALTIME_FUNDING', currency: 'USD' },
        destination: { destinationType: 'ACCOUNT', accountId: destination.id },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 10_000,
      })
    ).body;
    const before = await counts(t);
    for (const permissions of [['VIEW'], ['MANAGE'], ['VIEW', 'MANAGE']]) {
      const auth = await token(permissions);
      // These operations declare 403: the refusal names the permission they need.
      for (const [path, body] of [
        ['/quotes', accountQuoteBody(source.id, destination.id)],
        [`/quotes/${quote.id}/execute`, undefined],
        ['/sandbox/send', { quoteId: realtime.id, currencyCode: 'USD' }],
      ] as const) {
        const refused = await t.api('POST', path, { auth, ...(body !== undefined ? { body } : {}) });
        expect(refused.status, `${permissions} POST ${path}`).toBe(403);
        expect(refused.body).toMatchObject({ code: 'FORBIDDEN', details: { requiredPermission: 'TRANSACT' } });
      }
      // authorize declares no 403: the refusal is a 401.
      const authorize = await t.api('POST', `/quotes/${quote.id}/authorize`, { auth, body: { code: '123456' } });
      expect([authorize.status, authorize.body.code]).toEqual([401, 'UNAUTHORIZED']);
      expect((await t.api('GET', `/quotes/${quote.id}`, { auth })).status).toBe(200);
    }
    expect(await counts(t)).toEqual(before);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    const transact = await token(['TRANSACT']);
    expect((await t.api('POST', `/quotes/${quote.id}/execute`, { auth: transact })).body.status).toBe('COMPLETED');
    expect(
      (await t.api('POST', '/quotes', { auth: transact, body: accountQuoteBody(source.id, destination.id) })).status,
    ).toBe(201);
    expect(
      (await t.api('POST', '/sandbox/send', { auth: transact, body: { quoteId: realtime.id, currencyCode: 'USD' } }))
        .status,
    ).toBe(200);
  });
});
