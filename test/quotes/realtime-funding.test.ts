// Real-time funding: a quote paid by its payment instructions (POST /sandbox/send in the
// sandbox), with the amount and currency checks; and Strong Customer Authentication for
// customers in the EU/EEA (202 PENDING_AUTHORIZATION, authorize, resend).

import { describe, expect, it } from 'vitest';
import {
  bech32Encode,
  checkBolt11,
  checkEvmAddress,
  checkSolanaAddress,
  checkSparkAddress,
  checkTronAddress,
  toBech32Words,
} from '../../src/modules/external-accounts/formats.js';
import { accountBody } from '../fixtures/accounts.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { eventsOf, expectBalancedBooks, externalAccount, fundedUsd } from '../fixtures/money.js';
import {
  accountQuoteBody,
  buildAtStart,
  counts,
  createQuote,
  executeQuote,
  postingKinds,
  quoteOf,
  START,
  systemAccount,
  transactionOf,
} from '../fixtures/quotes.js';
import { euCustomer as createEuCustomer, scaLogin } from '../fixtures/sca.js';
import type { TestApp } from '../helper.js';

const P = (type: string) => `OUTGOING_PAYMENT.${type}`;

function realtimeBody(customerId: string | undefined, destinationId: string, extra: Record<string, unknown> = {}) {
  return {
    source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', ...(customerId !== undefined ? { customerId } : {}) },
    destination: { destinationType: 'ACCOUNT', accountId: destinationId },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 20_000,
    ...extra,
  };
}

function send(t: TestApp, body: Record<string, unknown>) {
  return t.api('POST', '/sandbox/send', { body });
}

async function usCustomer(t: TestApp) {
  return createCustomer(t, individualBody('Jordan Rivera'));
}

/** An EU customer, logged in (an SCA session: authorizing a payment needs one). */
async function euCustomer(t: TestApp) {
  const customer = await createEuCustomer(t);
  await scaLogin(t, customer.id);
  return customer;
}

/** A customer's USD internal account, as listed now. */
async function customerUsd(t: TestApp, customerId: string) {
  return (await t.api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`))
    .body.data[0];
}

/** An EU customer and its USD internal account, funded with `amount` when given. */
async function euCustomerWithUsd(t: TestApp, amount?: number) {
  const customer = await euCustomer(t);
  const usd = await customerUsd(t, customer.id);
  if (amount !== undefined) await t.api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { body: { amount } });
  return { customer, usd };
}

describe('real-time funding', () => {
  it("a US customer's quote is 201 PENDING with payment instructions; /sandbox/send pays it and it completes", async () => {
    const t = await buildAtStart();
    const customer = await usCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const created = await createQuote(t, realtimeBody(customer.id, destination.id));
    expect(created.status).toBe(201);
    const quote = created.body;
    expect(quote).toMatchObject({
      status: 'PENDING',
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: customer.id },
      totalSendingAmount: 20_000,
    });
    expect(quote.scaChallenge).toBeUndefined();
    expect(quote.paymentInstructions).toEqual([
      {
        instructionsNotes: expect.stringContaining('20000'),
        isPlatformAccount: true,
        accountOrWalletInfo: {
          accountType: 'USD_ACCOUNT',
          accountNumber: expect.stringMatching(/^\d{12}$/),
          routingNumber: expect.any(String),
          bankName: expect.any(String),
          paymentRails: ['ACH', 'WIRE'],
          reference: expect.stringMatching(/^RY-[0-9A-F]{10}$/),
        },
      },
    ]);
    const tx0 = await transactionOf(t, quote.transactionId);
    expect(tx0).toMatchObject({
      status: 'PENDING',
      customerId: customer.id,
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: customer.id },
    });

    // Execute is for account sources: a real-time-funded quote executes when it is paid.
    const execute = await executeQuote(t, quote.id);
    expect(execute.status).toBe(400);
    expect(execute.body.code).toBe('INVALID_INPUT');
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');

    const sent = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({
      id: quote.transactionId,
      type: 'OUTGOING',
      status: 'COMPLETED',
      quoteId: quote.id,
      sentAmount: { amount: 20_000 },
    });
    expect(sent.body).toEqual(await transactionOf(t, quote.transactionId));
    expect((await quoteOf(t, quote.id)).status).toBe('COMPLETED');
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PROCESSING'),
      P('COMPLETED'),
    ]);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 0n, held: 0n });
    expect(await systemAccount(t, 'EXTERNAL_RAILS', 'MXN')).toEqual({
      available: BigInt(quote.totalReceivingAmount),
      held: 0n,
    });

    // Paying it twice is refused.
    const twice = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(twice.status).toBe(400);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    await expectBalancedBooks(t);
  });

  it('a slow payout (003) is PROCESSING after the send, COMPLETED 6 minutes later', async () => {
    const t = await buildAtStart();
    const customer = await usCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT', '003');
    const quote = (await createQuote(t, realtimeBody(customer.id, destination.id))).body;
    const sent = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: 20_000 });
    expect(sent.status).toBe(200);
    expect(sent.body.status).toBe('PROCESSING');
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 20_000n, held: 0n });
    await t.advanceClock(6 * 60);
    expect((await quoteOf(t, quote.id)).status).toBe('COMPLETED');
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 0n, held: 0n });
    await expectBalancedBooks(t);
  });

  it('a failed payout of a real-time-funded quote is refunded to the payer', async () => {
    const t = await buildAtStart();
    const customer = await usCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT', '002');
    const quote = (await createQuote(t, realtimeBody(customer.id, destination.id))).body;
    const sent = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(sent.body).toMatchObject({
      status: 'FAILED',
      failureReason: 'QUOTE_EXECUTION_FAILED',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
    });
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'REFUND']);
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 0n, held: 0n });
    await expectBalancedBooks(t);
  });

  it('refuses a send in another currency (400 INVALID_CURRENCY) and changes nothing', async () => {
    const t = await buildAtStart();
    const customer = await usCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, realtimeBody(customer.id, destination.id))).body;
    const reply = await send(t, { quoteId: quote.id, currencyCode: 'MXN' });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'INVALID_CURRENCY', details: { errors: [{ field: 'currencyCode' }] } });
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([P('PENDING')]);
  });

  it.each([
    ['less', 19_999],
    ['more', 20_001],
  ])(
    'money in the wrong amount (%s) fails the payment with FUNDING_AMOUNT_MISMATCH and is refunded',
    async (_what, paid) => {
      const t = await buildAtStart();
      const customer = await usCustomer(t);
      const destination = await externalAccount(t, 'MXN_ACCOUNT');
      const quote = (await createQuote(t, realtimeBody(customer.id, destination.id))).body;
      const reply = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: paid });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        status: 'FAILED',
        failureReason: 'FUNDING_AMOUNT_MISMATCH',
        refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
      });
      expect((await quoteOf(t, quote.id)).status).toBe('FAILED');
      expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
        P('PENDING'),
        P('FAILED'),
        P('REFUND_PENDING'),
        P('REFUND_COMPLETED'),
      ]);
      expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'REFUND']);
      expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 0n, held: 0n });
      expect(await systemAccount(t, 'EXTERNAL_RAILS', 'MXN')).toEqual({ available: 0n, held: 0n });
      await expectBalancedBooks(t);
    },
  );

  it('refuses a send after the quote expired', async () => {
    const t = await buildAtStart();
    const customer = await usCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, realtimeBody(customer.id, destination.id))).body;
    await t.advanceClock(15 * 60);
    expect((await quoteOf(t, quote.id)).status).toBe('EXPIRED');
    const reply = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(reply.status).toBe(400);
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
    expect(await transactionOf(t, quote.transactionId)).toMatchObject({
      status: 'EXPIRED',
      failureReason: 'QUOTE_EXPIRED',
    });
  });

  it('answers 404 for an unknown quote and 400 for a quote funded from an account', async () => {
    const t = await buildAtStart();
    const unknown = await send(t, { quoteId: 'Quote:0193f1d2-0000-7000-8000-000000000000', currencyCode: 'USD' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('QUOTE_NOT_FOUND');
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    const reply = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'quoteId' })]);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
  });

  it('the platform itself may fund a quote in real time (no customer)', async () => {
    const t = await buildAtStart();
    const destination = await externalAccount(t, 'EUR_ACCOUNT');
    const reply = await createQuote(t, realtimeBody(undefined, destination.id));
    expect(reply.status).toBe(201);
    expect(reply.body.source).toEqual({ sourceType: 'REALTIME_FUNDING', currency: 'USD' });
    expect(reply.body.paymentInstructions).toHaveLength(1);
    expect((await send(t, { quoteId: reply.body.id, currencyCode: 'USD' })).body.status).toBe('COMPLETED');
    await expectBalancedBooks(t);
  });

  it('requires the network when funding in a multi-network stablecoin', async () => {
    const t = await buildAtStart();
    const customer = await usCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const body = realtimeBody(customer.id, destination.id, { lockedCurrencyAmount: 20_000_000 });
    const reply = await createQuote(t, {
      ...body,
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USDC', customerId: customer.id },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([
      {
        field: 'source.cryptoNetwork',
        constraint: { enum: ['SOLANA', 'BASE', 'POLYGON', 'ETHEREUM'] },
        message: expect.stringContaining('required'),
      },
    ]);
  });

  // Every network each crypto currency can be paid on, the deposit it gets, and a check of the address.
  const NETWORKS: [currency: string, network: string | undefined, amount: number, check: (info: any) => void][] = [
    [
      'USDC',
      'SOLANA',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkSolanaAddress(info.address)]).toEqual([
          'SOLANA_WALLET',
          'USDC',
          null,
        ]),
    ],
    [
      'USDC',
      'BASE',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkEvmAddress(info.address)]).toEqual([
          'BASE_WALLET',
          'USDC',
          null,
        ]),
    ],
    [
      'USDC',
      'POLYGON',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkEvmAddress(info.address)]).toEqual([
          'POLYGON_WALLET',
          'USDC',
          null,
        ]),
    ],
    [
      'USDC',
      'ETHEREUM',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkEvmAddress(info.address)]).toEqual([
          'ETHEREUM_WALLET',
          'USDC',
          null,
        ]),
    ],
    [
      'USDT',
      'TRON',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkTronAddress(info.address)]).toEqual([
          'TRON_WALLET',
          'USDT',
          null,
        ]),
    ],
    [
      'USDT',
      'SOLANA',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkSolanaAddress(info.address)]).toEqual([
          'SOLANA_WALLET',
          'USDT',
          null,
        ]),
    ],
    [
      'USDT',
      'ETHEREUM',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkEvmAddress(info.address)]).toEqual([
          'ETHEREUM_WALLET',
          'USDT',
          null,
        ]),
    ],
    [
      'USDT',
      'PLASMA',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkEvmAddress(info.address)]).toEqual([
          'PLASMA_WALLET',
          'USDT',
          null,
        ]),
    ],
    [
      'BTC',
      undefined,
      30_000,
      (info) =>
        expect([info.accountType, info.assetType, checkSparkAddress(info.address)]).toEqual([
          'SPARK_WALLET',
          'BTC',
          null,
        ]),
    ],
    [
      'BTC',
      'SPARK',
      30_000,
      (info) =>
        expect([info.accountType, info.assetType, checkSparkAddress(info.address)]).toEqual([
          'SPARK_WALLET',
          'BTC',
          null,
        ]),
    ],
    // The invoice asks for the quote's amount: 30000 sat, in BOLT 11's tenths of a satoshi.
    [
      'BTC',
      'LIGHTNING',
      30_000,
      (info) => {
        expect([info.accountType, checkBolt11(info.invoice)]).toEqual(['LIGHTNING', null]);
        expect(info.invoice).toMatch(/^lnbcrt300000n1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]+$/);
      },
    ],
    [
      'BTC',
      'BITCOIN',
      30_000,
      (info) =>
        expect(info).toEqual({
          accountType: 'BITCOIN_L1',
          address: expect.stringMatching(/^bcrt1q[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{38}$/),
          network: 'BITCOIN',
        }),
    ],
    [
      'USDB',
      'SPARK',
      20_000_000,
      (info) =>
        expect([info.accountType, info.assetType, checkSparkAddress(info.address)]).toEqual([
          'SPARK_WALLET',
          'USDB',
          null,
        ]),
    ],
  ];

  for (const [currency, network, amount, check] of NETWORKS) {
    it(`real-time funding in ${currency}${network ? ` on ${network}` : ' (no network named)'}: instructions for that network, and the quote is payable`, async () => {
      const t = await buildAtStart();
      const destination = await externalAccount(t, 'MXN_ACCOUNT');
      const source = { sourceType: 'REALTIME_FUNDING', currency, ...(network ? { cryptoNetwork: network } : {}) };
      const reply = await createQuote(t, {
        ...realtimeBody(undefined, destination.id, { lockedCurrencyAmount: amount }),
        source,
      });
      expect(reply.status).toBe(201);
      expect(reply.body.source).toEqual(source);
      expect(reply.body.paymentInstructions).toHaveLength(1);
      const instructions = reply.body.paymentInstructions[0];
      expect(instructions.isPlatformAccount).toBe(true);
      check(instructions.accountOrWalletInfo);
      // Instructions are the quote's own: another quote gets another address.
      const other = await createQuote(t, {
        ...realtimeBody(undefined, destination.id, { lockedCurrencyAmount: amount }),
        source,
      });
      expect(other.body.paymentInstructions[0].accountOrWalletInfo).not.toEqual(instructions.accountOrWalletInfo);
      expect((await send(t, { quoteId: reply.body.id, currencyCode: currency })).body.status).toBe('COMPLETED');
      await expectBalancedBooks(t);
    });
  }

  it('refuses a network the currency does not move on, naming the field; a network given for fiat is ignored', async () => {
    const t = await buildAtStart();
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const usdcOnTron = await createQuote(t, {
      ...realtimeBody(undefined, destination.id, { lockedCurrencyAmount: 20_000_000 }),
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USDC', cryptoNetwork: 'TRON' },
    });
    expect(usdcOnTron.status).toBe(400);
    expect(usdcOnTron.body.details.errors).toEqual([
      {
        field: 'source.cryptoNetwork',
        constraint: { enum: ['SOLANA', 'BASE', 'POLYGON', 'ETHEREUM'] },
        message: 'must be a network USDC moves on (SOLANA, BASE, POLYGON, ETHEREUM)',
      },
    ]);
    const unknown = await createQuote(t, {
      ...realtimeBody(undefined, destination.id, { lockedCurrencyAmount: 30_000 }),
      source: { sourceType: 'REALTIME_FUNDING', currency: 'BTC', cryptoNetwork: 'NOT_A_NETWORK' },
    });
    expect(unknown.body.details.errors).toEqual([
      expect.objectContaining({
        field: 'source.cryptoNetwork',
        constraint: { enum: ['SPARK', 'LIGHTNING', 'BITCOIN'] },
      }),
    ]);
    expect(await counts(t)).toMatchObject({ quotes: 0 });
    const fiat = await createQuote(t, {
      ...realtimeBody(undefined, destination.id),
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', cryptoNetwork: 'SOLANA' },
    });
    expect(fiat.status).toBe(201);
    expect(fiat.body.paymentInstructions[0].accountOrWalletInfo.accountType).toBe('USD_ACCOUNT');
  });

  it('encodes bech32 as BIP 173 does (the deposit addresses and invoices above use it)', () => {
    const program = Buffer.from('751e76e8199196d454941c45d1b3a323f1433bd6', 'hex');
    expect(bech32Encode('bc', [0, ...toBech32Words(program)])).toBe('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    const script = Buffer.from('1863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262', 'hex');
    expect(bech32Encode('tb', [0, ...toBech32Words(script)])).toBe(
      'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7',
    );
  });
});

describe('Strong Customer Authentication of real-time-funded quotes', () => {
  it("an EU customer's quote is 202 PENDING_AUTHORIZATION; 123456 authorizes it and releases the instructions", async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const created = await createQuote(t, realtimeBody(customer.id, destination.id));
    expect(created.status).toBe(202);
    const quote = created.body;
    expect(quote.status).toBe('PENDING_AUTHORIZATION');
    expect(quote.paymentInstructions).toBeUndefined();
    expect(quote.scaChallenge).toEqual({
      id: expect.stringMatching(/^ScaChallenge:[0-9a-f-]{36}$/),
      expiresAt: new Date(START.getTime() + 10 * 60 * 1000).toISOString(),
      factor: 'SMS_OTP',
      availableFactors: ['SMS_OTP'],
      purpose: 'PAYOUT',
    });
    expect(await quoteOf(t, quote.id)).toEqual(quote);
    expect((await transactionOf(t, quote.transactionId)).status).toBe('PENDING_AUTHORIZATION');
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([P('PENDING_AUTHORIZATION')]);

    // Not payable, not executable until authorized.
    expect((await send(t, { quoteId: quote.id, currencyCode: 'USD' })).status).toBe(400);
    expect((await executeQuote(t, quote.id)).status).toBe(400);

    // A wrong code, or neither or both of code and passkeyAssertion, is a 400 and changes nothing.
    const wrong = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '654321' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.details.errors).toEqual([expect.objectContaining({ field: 'code' })]);
    const neither = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: {} });
    expect(neither.status).toBe(400);
    const both = await t.api('POST', `/quotes/${quote.id}/authorize`, {
      body: { code: '123456', passkeyAssertion: { id: 'x' }, origin: 'https://pay.example.com' },
    });
    expect(both.status).toBe(400);
    expect(await quoteOf(t, quote.id)).toEqual(quote);

    const resend = await t.api('POST', `/quotes/${quote.id}/authorize/resend`);
    expect(resend.status).toBe(204);
    expect(resend.text).toBe('');
    // The same challenge, expiry included: a resend issues nothing new.
    expect(await quoteOf(t, quote.id)).toEqual(quote);

    const authorized = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } });
    expect(authorized.status).toBe(200);
    expect(authorized.body.status).toBe('PENDING');
    expect(authorized.body.scaChallenge).toBeUndefined();
    expect(authorized.body.paymentInstructions).toEqual([
      expect.objectContaining({
        isPlatformAccount: true,
        accountOrWalletInfo: expect.objectContaining({ accountType: 'USD_ACCOUNT' }),
      }),
    ]);
    expect(await quoteOf(t, quote.id)).toEqual(authorized.body);
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING_AUTHORIZATION'),
      P('PENDING'),
    ]);

    // Nothing left to authorize.
    const again = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('CONFLICT');
    expect((await t.api('POST', `/quotes/${quote.id}/authorize/resend`)).status).toBe(409);

    const sent = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(sent.status).toBe(200);
    expect(sent.body.status).toBe('COMPLETED');
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING_AUTHORIZATION'),
      P('PENDING'),
      P('PROCESSING'),
      P('COMPLETED'),
    ]);
    await expectBalancedBooks(t);
  });

  it('an idempotent replay of a 202 answers 202 with the same body, and makes one quote', async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const first = await createQuote(t, realtimeBody(customer.id, destination.id), { 'idempotency-key': 'sca-once' });
    const again = await createQuote(t, realtimeBody(customer.id, destination.id), { 'idempotency-key': 'sca-once' });
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.text).toBe(first.text);
    expect(await counts(t)).toMatchObject({ quotes: 1, transactions: 1 });
  });

  it('a challenge past its expiresAt can be neither authorized nor sent again; the quote then fails SCA_NOT_COMPLETED', async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, realtimeBody(customer.id, destination.id))).body;
    // The challenge lasts 10 minutes, the quote (SPEI, not an instant rail) 15.
    expect(quote.expiresAt).toBe(new Date(START.getTime() + 15 * 60 * 1000).toISOString());
    expect(quote.scaChallenge.expiresAt).toBe(new Date(START.getTime() + 10 * 60 * 1000).toISOString());
    await t.advanceClock(10 * 60 + 1);
    const late = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } });
    expect(late.status).toBe(400);
    expect(late.body.details.errors).toEqual([expect.objectContaining({ field: 'code' })]);
    const resent = await t.api('POST', `/quotes/${quote.id}/authorize/resend`);
    expect(resent.status).toBe(409);
    expect(resent.body.code).toBe('CONFLICT');
    expect(await quoteOf(t, quote.id)).toEqual(quote);
    // When the quote expires, the payment that was never authorized fails.
    await t.advanceClock(5 * 60);
    const failed = await quoteOf(t, quote.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.scaChallenge).toBeUndefined();
    expect(failed.paymentInstructions).toBeUndefined();
    expect(await transactionOf(t, quote.transactionId)).toMatchObject({
      status: 'FAILED',
      failureReason: 'SCA_NOT_COMPLETED',
    });
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING_AUTHORIZATION'),
      P('FAILED'),
    ]);
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
    expect((await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } })).status).toBe(409);
    expect((await t.api('POST', `/quotes/${quote.id}/authorize/resend`)).status).toBe(409);
    expect((await send(t, { quoteId: quote.id, currencyCode: 'USD' })).status).toBe(400);
  });

  it("a challenge never outlives its quote: on an instant rail both end at the quote's expiresAt", async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    const destination = await t.api('POST', '/platform/external-accounts', { body: accountBody('EUR_ACCOUNT') });
    expect(destination.body.accountInfo.paymentRails).toContain('SEPA_INSTANT');
    const quote = (
      await createQuote(
        t,
        realtimeBody(customer.id, destination.body.id, {
          destination: { destinationType: 'ACCOUNT', accountId: destination.body.id, paymentRail: 'SEPA_INSTANT' },
        }),
      )
    ).body;
    expect(quote.expiresAt).toBe(new Date(START.getTime() + 5 * 60 * 1000).toISOString());
    expect(quote.scaChallenge.expiresAt).toBe(quote.expiresAt);
  });

  it("an unauthorized quote fails with the reference's SCA_NOT_COMPLETED when it expires, and authorize is then a 409", async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, realtimeBody(customer.id, destination.id))).body;
    await t.advanceClock(15 * 60 - 1);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING_AUTHORIZATION');
    await t.advanceClock(1);
    const failed = await quoteOf(t, quote.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.scaChallenge).toBeUndefined();
    expect(await transactionOf(t, quote.transactionId)).toMatchObject({
      status: 'FAILED',
      failureReason: 'SCA_NOT_COMPLETED',
    });
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING_AUTHORIZATION'),
      P('FAILED'),
    ]);
    expect((await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } })).status).toBe(409);
    expect((await t.api('POST', `/quotes/${quote.id}/authorize/resend`)).status).toBe(409);
    await expectBalancedBooks(t);
  });

  it('a quote past expiresAt cannot be authorized or resent, even before the expiry job has run', async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    const destination = await t.api('POST', '/platform/external-accounts', { body: accountBody('EUR_ACCOUNT') });
    // An instant rail: the quote and its challenge both last 5 minutes.
    const quote = (
      await createQuote(
        t,
        realtimeBody(customer.id, destination.body.id, {
          destination: { destinationType: 'ACCOUNT', accountId: destination.body.id, paymentRail: 'SEPA_INSTANT' },
        }),
      )
    ).body;
    // Move the clock without running jobs: straight through the store, as a paused poller would leave it.
    await t.deps.db.k
      .updateTable('platforms')
      .set({ clock_offset_ms: 5 * 60 * 1000 } as never)
      .where('id', '=', t.platformId)
      .execute();
    t.deps.authCache?.clear();
    const late = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('CONFLICT');
    expect((await t.api('POST', `/quotes/${quote.id}/authorize/resend`)).status).toBe(409);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING_AUTHORIZATION');
  });

  it('a resend racing the authorize never takes the released instructions back', async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    for (let round = 0; round < 5; round++) {
      const quote = (await createQuote(t, realtimeBody(customer.id, destination.id))).body;
      const [authorized, resent] = await Promise.all([
        t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } }),
        t.api('POST', `/quotes/${quote.id}/authorize/resend`),
      ]);
      expect(authorized.status).toBe(200);
      expect([204, 409]).toContain(resent.status);
      const after = await quoteOf(t, quote.id);
      expect(after.status).toBe('PENDING');
      expect(after.paymentInstructions).toHaveLength(1);
      expect(after.scaChallenge).toBeUndefined();
    }
  });

  it('a US customer is not challenged; authorize and resend on its quote are 409', async () => {
    const t = await buildAtStart();
    const customer = await usCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const reply = await createQuote(t, realtimeBody(customer.id, destination.id, { scaFactor: 'SMS_OTP' }));
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe('PENDING');
    expect(reply.body.scaChallenge).toBeUndefined();
    expect((await t.api('POST', `/quotes/${reply.body.id}/authorize`, { body: { code: '123456' } })).status).toBe(409);
    expect((await t.api('POST', `/quotes/${reply.body.id}/authorize/resend`)).status).toBe(409);
  });

  it('an EU customer paying from an internal account is challenged at execute; authorizing it pays', async () => {
    const t = await buildAtStart();
    const { customer, usd } = await euCustomerWithUsd(t, 50_000);
    const destination = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('EUR_ACCOUNT'), customerId: customer.id },
    });
    const reply = await createQuote(t, accountQuoteBody(usd.id, destination.body.id));
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe('PENDING');
    expect(reply.body.scaChallenge).toBeUndefined();
    expect(await counts(t)).toMatchObject({ quotes: 1 });
    const quote = reply.body;
    const usdBalance = async () => (await customerUsd(t, customer.id)).balance.amount;

    // Execute does not pay yet: it opens a challenge.
    const executed = await executeQuote(t, quote.id);
    expect(executed.status).toBe(200);
    expect(executed.body).toMatchObject({
      status: 'PENDING_AUTHORIZATION',
      scaChallenge: { factor: 'SMS_OTP', availableFactors: ['SMS_OTP'] },
    });
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
    expect(await usdBalance()).toBe(50_000);
    expect((await executeQuote(t, quote.id)).status).toBe(409);
    expect((await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '000000' } })).status).toBe(400);

    // Authorizing it makes the payment.
    const authorized = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } });
    expect(authorized.status).toBe(200);
    expect(authorized.body.status).toBe('COMPLETED');
    expect(authorized.body.scaChallenge).toBeUndefined();
    expect(authorized.body.paymentInstructions).toBeUndefined();
    expect(await postingKinds(t, quote.transactionId)).toEqual(['HOLD', 'CONVERT', 'PAYOUT']);
    expect(await usdBalance()).toBe(50_000 - quote.totalSendingAmount);
    // Authorized, the payment goes straight from PENDING_AUTHORIZATION to PROCESSING.
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PENDING_AUTHORIZATION'),
      P('PROCESSING'),
      P('COMPLETED'),
    ]);
    expect((await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } })).status).toBe(409);
    await expectBalancedBooks(t);
  });

  it('an EU customer executing at creation is challenged (201: 202 is for real-time funding); unanswered, the payment fails SCA_NOT_COMPLETED when the quote expires', async () => {
    const t = await buildAtStart();
    const { customer, usd } = await euCustomerWithUsd(t, 50_000);
    const destination = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('EUR_ACCOUNT'), customerId: customer.id },
    });
    const reply = await createQuote(
      t,
      accountQuoteBody(usd.id, destination.body.id, { extra: { immediatelyExecute: true } }),
    );
    expect(reply.status).toBe(201);
    const quote = reply.body;
    expect(quote).toMatchObject({
      status: 'PENDING_AUTHORIZATION',
      scaChallenge: { factor: 'SMS_OTP', purpose: 'PAYOUT' },
    });
    expect(await quoteOf(t, quote.id)).toEqual(quote);
    expect(await transactionOf(t, quote.transactionId)).toMatchObject({ status: 'PENDING_AUTHORIZATION' });
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PENDING_AUTHORIZATION'),
    ]);
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);

    const lifetimeSeconds = (Date.parse(quote.expiresAt) - Date.parse(quote.createdAt)) / 1000;
    await t.advanceClock(lifetimeSeconds - 1);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING_AUTHORIZATION');
    await t.advanceClock(1);
    expect(await transactionOf(t, quote.transactionId)).toMatchObject({
      status: 'FAILED',
      failureReason: 'SCA_NOT_COMPLETED',
    });
    expect((await quoteOf(t, quote.id)).status).toBe('FAILED');
    expect((await customerUsd(t, customer.id)).balance.amount).toBe(50_000);
    await expectBalancedBooks(t);
  });

  it("an EU customer's quote whose destination is gone is refused at execute, before any challenge; gone after the challenge, at authorize", async () => {
    const t = await buildAtStart();
    const { customer, usd } = await euCustomerWithUsd(t, 50_000);
    const newDestination = async () =>
      (
        await t.api('POST', '/customers/external-accounts', {
          body: { ...accountBody('EUR_ACCOUNT'), customerId: customer.id },
        })
      ).body;
    const gone = async (id: string) =>
      expect((await t.api('DELETE', `/customers/external-accounts/${id}`)).status).toBe(204);

    const early = await newDestination();
    const first = (await createQuote(t, accountQuoteBody(usd.id, early.id))).body;
    await gone(early.id);
    const refused = await executeQuote(t, first.id);
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      { field: 'destination.accountId', message: `names ${early.id}, which no longer exists` },
    ]);
    expect(await quoteOf(t, first.id)).toEqual(first);

    const late = await newDestination();
    const second = (await createQuote(t, accountQuoteBody(usd.id, late.id))).body;
    expect((await executeQuote(t, second.id)).body.status).toBe('PENDING_AUTHORIZATION');
    await gone(late.id);
    const authorize = await t.api('POST', `/quotes/${second.id}/authorize`, { body: { code: '123456' } });
    expect(authorize.status).toBe(400);
    expect(authorize.body.details.errors).toEqual([
      { field: 'destination.accountId', message: `names ${late.id}, which no longer exists` },
    ]);
    expect(await quoteOf(t, second.id)).toMatchObject({
      status: 'PENDING_AUTHORIZATION',
      scaChallenge: { factor: 'SMS_OTP' },
    });
    expect(await postingKinds(t, second.transactionId)).toEqual([]);
  });

  it('an EU customer funding in crypto gets, once authorized, instructions on the network the quote named', async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const source = { sourceType: 'REALTIME_FUNDING', currency: 'USDC', customerId: customer.id, cryptoNetwork: 'BASE' };
    const quote = (
      await createQuote(t, {
        ...realtimeBody(customer.id, destination.id, { lockedCurrencyAmount: 20_000_000 }),
        source,
      })
    ).body;
    expect([quote.status, quote.paymentInstructions]).toEqual(['PENDING_AUTHORIZATION', undefined]);
    const authorized = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } });
    expect(authorized.body.paymentInstructions[0].accountOrWalletInfo).toEqual({
      accountType: 'BASE_WALLET',
      address: expect.stringMatching(/^0x[0-9a-f]{40}$/),
      assetType: 'USDC',
    });
  });

  it('an EU customer whose account cannot cover the payment is refused at authorize, and the challenge stays open', async () => {
    const t = await buildAtStart();
    const { customer, usd } = await euCustomerWithUsd(t);
    const destination = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('EUR_ACCOUNT'), customerId: customer.id },
    });
    const quote = (await createQuote(t, accountQuoteBody(usd.id, destination.body.id))).body;
    expect((await executeQuote(t, quote.id)).body.status).toBe('PENDING_AUTHORIZATION');
    const refused = await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INVALID_AMOUNT');
    expect(await quoteOf(t, quote.id)).toMatchObject({
      status: 'PENDING_AUTHORIZATION',
      scaChallenge: { factor: 'SMS_OTP' },
    });
    await t.api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { body: { amount: 50_000 } });
    expect((await t.api('POST', `/quotes/${quote.id}/authorize`, { body: { code: '123456' } })).body.status).toBe(
      'COMPLETED',
    );
  });
});
