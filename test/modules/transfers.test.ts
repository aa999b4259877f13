import { describe, expect, it } from 'vitest';
import { TRANSFER_SCENARIOS } from '../../src/rails/magic.js';
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

const USD = { code: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 };

describe('POST /transfer-out', () => {
  it('settles at once: COMPLETED, funds gone, events in order, books balanced', async () => {
    const t = await build();
    const source = await fundedUsd(t, 100_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT', '000');
    const reply = await transferOut(t, source.id, destination.id, 12_345);
    expect(reply.status).toBe(201);
    const tx = reply.body;
    expect(tx.id).toMatch(/^Transaction:[0-9a-f-]{36}$/);
    expect(tx).toEqual({
      id: tx.id,
      type: 'OUTGOING',
      status: 'COMPLETED',
      direction: 'DEBIT',
      source: { sourceType: 'ACCOUNT', accountId: source.id, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: destination.id, currency: 'USD' },
      customerId: t.platformId,
      platformCustomerId: t.platformId,
      settledAt: tx.createdAt,
      createdAt: tx.createdAt,
      updatedAt: tx.createdAt,
      sentAmount: { amount: 12_345, currency: USD },
      receivedAmount: { amount: 12_345, currency: USD },
      exchangeRate: 1,
      fees: 0,
      platformFees: 0,
      reconciliationInstructions: { reference: expect.stringMatching(/^RY[0-9A-F]{12}$/) },
      paymentRail: 'ACH',
      railSelectionMode: 'AUTO',
    });
    expect(await balances(t, source.id)).toEqual({ balance: 87_655, totalBalance: 87_655 });
    expect((await eventsOf(t, tx.id)).map((e) => [e.type, e.data.status])).toEqual([
      ['OUTGOING_PAYMENT.PROCESSING', 'PROCESSING'],
      ['OUTGOING_PAYMENT.COMPLETED', 'COMPLETED'],
    ]);
    const accountEvents = await eventsOf(t, source.id);
    expect(accountEvents.map((e) => [e.type, e.data.balance.amount])).toEqual([
      ['INTERNAL_ACCOUNT.BALANCE_UPDATED', 100_000],
      ['INTERNAL_ACCOUNT.BALANCE_UPDATED', 87_655],
    ]);
    const postings = await t.deps.db.k
      .selectFrom('ledger_postings')
      .select('kind')
      .where('transaction_id', '=', tx.id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(postings.map((p) => p.kind)).toEqual(['HOLD', 'SETTLE']);
    const books = await expectBalancedBooks(t);
    expect(books.accounts.find((a: any) => a.kind === 'EXTERNAL_RAILS' && a.currency === 'USD').available).toBe(
      '12345',
    );
    expect((await t.api('GET', `/transactions/${tx.id}`)).body).toEqual(tx);
  });

  it('uses a rail the destination names (MANUAL) and rejects one it cannot take', async () => {
    const t = await build();
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const wire = await t.api('POST', '/transfer-out', {
      body: {
        source: { accountId: source.id },
        destination: { accountId: destination.id, paymentRail: 'WIRE' },
        amount: 500,
        remittanceInformation: 'Invoice 42',
        purposeOfPayment: 'GOODS_OR_SERVICES',
      },
    });
    expect(wire.status).toBe(201);
    expect(wire.body).toMatchObject({ paymentRail: 'WIRE', railSelectionMode: 'MANUAL', status: 'COMPLETED' });
    const sepa = await t.api('POST', '/transfer-out', {
      body: {
        source: { accountId: source.id },
        destination: { accountId: destination.id, paymentRail: 'SEPA' },
        amount: 500,
      },
    });
    expect(sepa.status).toBe(400);
    expect(sepa.body.details.errors).toEqual([expect.objectContaining({ field: 'destination.paymentRail' })]);
  });

  it('pays a wallet with no bank rail', async () => {
    const t = await build();
    const usdb = await platformAccount(t, 'USDB');
    await fund(t, usdb.id, 5_000_000);
    const wallet = await t.api('POST', '/platform/external-accounts', {
      body: { ...accountBody('SPARK_WALLET'), currency: 'USDB' },
    });
    const reply = await transferOut(t, usdb.id, wallet.body.id, 1_000_000);
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      status: 'COMPLETED',
      paymentRail: null,
      railSelectionMode: null,
      sentAmount: { amount: 1_000_000, currency: { code: 'USDB', decimals: 6 } },
    });
  });

  it('refuses an amount the available balance does not cover, and writes nothing', async () => {
    const t = await build();
    const source = await fundedUsd(t, 1_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const reply = await transferOut(t, source.id, destination.id, 1_001);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      code: 'INVALID_AMOUNT',
      details: { reason: 'INSUFFICIENT_BALANCE', availableBalance: 1_000, errors: [{ field: 'amount' }] },
    });
    expect((await t.api('GET', '/transactions')).body.totalCount).toBe(0);
    expect(await balances(t, source.id)).toEqual({ balance: 1_000, totalBalance: 1_000 });
    expect((await transferOut(t, source.id, destination.id, 1_000)).body.status).toBe('COMPLETED');
    expect(await balances(t, source.id)).toEqual({ balance: 0, totalBalance: 0 });
  });

  it('lists every invalid field of a body at once', async () => {
    const t = await build();
    const reply = await t.api('POST', '/transfer-out', {
      body: {
        source: {},
        destination: { accountId: '', paymentRail: 'CARRIER_PIGEON' },
        amount: 0,
        remittanceInformation: 'x'.repeat(81),
        purposeOfPayment: 'BRIBE',
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors.map((e: any) => e.field).sort()).toEqual([
      'amount',
      'destination.accountId',
      'destination.paymentRail',
      'purposeOfPayment',
      'remittanceInformation',
      'source.accountId',
    ]);
    const fraction = await t.api('POST', '/transfer-out', {
      body: { source: { accountId: 'a' }, destination: { accountId: 'b' }, amount: 1.5 },
    });
    expect(fraction.body.details.errors.map((e: any) => e.field)).toEqual(['amount']);
    const missing = await t.api('POST', '/transfer-out', {
      body: { source: { accountId: 'a' }, destination: { accountId: 'b' } },
    });
    expect(missing.body.details.errors).toEqual([{ field: 'amount', message: 'is required' }]);
  });

  it('answers 404 for an unknown account, or one of another platform', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const theirSource = await platformAccount(other, 'USD');
    const theirDestination = await externalAccount(other, 'USD_ACCOUNT');
    for (const [from, to, field] of [
      ['InternalAccount:0193f1d2-0000-7000-8000-000000000000', destination.id, 'source.accountId'],
      [theirSource.id, destination.id, 'source.accountId'],
      [source.id, 'ExternalAccount:0193f1d2-0000-7000-8000-000000000000', 'destination.accountId'],
      [source.id, theirDestination.id, 'destination.accountId'],
    ]) {
      const reply = await transferOut(t, from!, to!, 100);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ code: 'REFERENCE_NOT_FOUND', details: { field } });
    }
  });

  it('moves money only between accounts of one owner', async () => {
    const t = await build();
    const platformUsd = await fundedUsd(t);
    const customer = await customerWithAccounts(t, 'crm-transfers-1');
    const platformExternal = await externalAccount(t, 'USD_ACCOUNT');
    await fund(t, customer.usd.id, 50_000);

    const crossed = await transferOut(t, platformUsd.id, customer.external.id, 100);
    expect(crossed.status).toBe(400);
    expect(crossed.body.details.errors).toEqual([
      expect.objectContaining({
        field: 'destination.accountId',
        message: expect.stringContaining('both accounts must have the same owner'),
      }),
    ]);
    expect((await transferOut(t, customer.usd.id, platformExternal.id, 100)).status).toBe(400);
    expect((await transferIn(t, customer.external.id, platformUsd.id, 100)).status).toBe(400);

    const own = await transferOut(t, customer.usd.id, customer.external.id, 2_500);
    expect(own.status).toBe(201);
    expect(own.body).toMatchObject({
      status: 'COMPLETED',
      customerId: customer.customer.id,
      platformCustomerId: 'crm-transfers-1',
    });
  });

  it('needs one currency on both sides, enabled on the platform', async () => {
    const t = await build();
    const usdc = await platformAccount(t, 'USDC');
    await fund(t, usdc.id, 1_000_000);
    const usdBank = await externalAccount(t, 'USD_ACCOUNT');
    const mismatch = await transferOut(t, usdc.id, usdBank.id, 100);
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({
      code: 'INVALID_CURRENCY',
      details: { errors: [{ field: 'destination.accountId' }] },
    });

    const usd = await fundedUsd(t);
    const config = (await t.api('GET', '/config')).body;
    const incomingOnly = config.supportedCurrencies.map((c: any) =>
      c.currencyCode === 'USD' ? { ...c, enabledTransactionTypes: ['INCOMING'] } : c,
    );
    await t.api('PATCH', '/config', { body: { supportedCurrencies: incomingOnly } });
    const disabled = await transferOut(t, usd.id, usdBank.id, 100);
    expect(disabled.status).toBe(400);
    expect(disabled.body.code).toBe('INVALID_CURRENCY');
    expect((await transferIn(t, usdBank.id, usd.id, 100)).status).toBe(201);
  });

  it('enforces the per-currency single-transaction limits of the configuration', async () => {
    const t = await build();
    const source = await fundedUsd(t, 100_000_000_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    // The sandbox default maximum for USD is 100,000,000 (one million dollars).
    expect((await transferOut(t, source.id, destination.id, 100_000_000)).body.status).toBe('COMPLETED');
    const over = await transferOut(t, source.id, destination.id, 100_000_001);
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({
      code: 'TRANSACTION_SIZE_LIMIT_EXCEEDED',
      details: { maxAmount: 100_000_000, errors: [{ field: 'amount' }] },
    });
    const huge = await transferOut(t, source.id, destination.id, 9_000_000_000_000_001);
    expect(huge.body.code).toBe('TRANSACTION_SIZE_LIMIT_EXCEEDED');

    const config = (await t.api('GET', '/config')).body;
    const limited = config.supportedCurrencies.map((c: any) =>
      c.currencyCode === 'USD' ? { ...c, minAmount: 500, maxAmount: 5_000 } : c,
    );
    await t.api('PATCH', '/config', { body: { supportedCurrencies: limited } });
    expect((await transferOut(t, source.id, destination.id, 5_001)).body.code).toBe('TRANSACTION_SIZE_LIMIT_EXCEEDED');
    expect((await transferIn(t, destination.id, source.id, 5_001)).body.code).toBe('TRANSACTION_SIZE_LIMIT_EXCEEDED');
    const under = await transferOut(t, source.id, destination.id, 499);
    expect(under.body).toMatchObject({ code: 'AMOUNT_OUT_OF_RANGE', details: { minAmount: 500 } });
    expect((await transferOut(t, source.id, destination.id, 5_000)).status).toBe(201);
    // The USDC limit is separate and untouched.
    const usdc = await platformAccount(t, 'USDC');
    await fund(t, usdc.id, 10_000_000);
    const base = await externalAccount(t, 'BASE_WALLET');
    expect((await transferOut(t, usdc.id, base.id, 10_000_000)).body.status).toBe('COMPLETED');
  });

  it("needs the external account's ownership verified", async () => {
    const t = await build({ counterpartyRules: true });
    const usdc = await platformAccount(t, 'USDC');
    await fund(t, usdc.id, 1_000_000);
    const body = accountBody('BASE_WALLET');
    const wallet = await t.api('POST', '/platform/external-accounts', {
      body: { ...body, ownershipType: 'FIRST_PARTY' },
    });
    expect(wallet.body.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    const reply = await transferOut(t, usdc.id, wallet.body.id, 100);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      code: 'EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED',
      details: { errors: [{ field: 'destination.accountId', message: 'is PENDING_OWNERSHIP_VERIFICATION' }] },
    });
  });

  it('needs the TRANSACT permission (401, as the operation declares no 403)', async () => {
    const t = await build();
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const token = await t.api('POST', '/tokens', { body: { name: 'viewer', permissions: ['VIEW', 'MANAGE'] } });
    const reply = await t.api('POST', '/transfer-out', {
      body: { source: { accountId: source.id }, destination: { accountId: destination.id }, amount: 1 },
      auth: { username: token.body.clientId, password: token.body.clientSecret },
    });
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ code: 'UNAUTHORIZED', details: { requiredPermission: 'TRANSACT' } });
  });
});

describe('POST /transfer-in', () => {
  it('pulls at once from a bank account: COMPLETED, funds available', async () => {
    const t = await build();
    const destination = await platformAccount(t, 'USD');
    const source = await externalAccount(t, 'USD_ACCOUNT', '000');
    const reply = await transferIn(t, source.id, destination.id, 7_500);
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      type: 'INCOMING',
      status: 'COMPLETED',
      direction: 'CREDIT',
      source: { sourceType: 'ACCOUNT', accountId: source.id, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: destination.id, currency: 'USD' },
      receivedAmount: { amount: 7_500, currency: USD },
      customerId: t.platformId,
      settledAt: reply.body.createdAt,
    });
    expect(reply.body.paymentRail).toBeUndefined();
    expect(await balances(t, destination.id)).toEqual({ balance: 7_500, totalBalance: 7_500 });
    expect((await eventsOf(t, reply.body.id)).map((e) => e.type)).toEqual([
      'INCOMING_PAYMENT.PENDING',
      'INCOMING_PAYMENT.COMPLETED',
    ]);
    const postings = await t.deps.db.k
      .selectFrom('ledger_postings')
      .select('kind')
      .where('transaction_id', '=', reply.body.id)
      .orderBy('id')
      .execute();
    expect(postings.map((p) => p.kind)).toEqual(['INCOMING_ACCEPT', 'INCOMING_COMPLETE']);
    await expectBalancedBooks(t);
  });

  it("answers 404 REFERENCE_NOT_FOUND for an unknown source or destination, or another platform's, and writes nothing", async () => {
    const t = await build();
    const other = await t.newPlatform();
    const destination = await platformAccount(t, 'USD');
    const source = await externalAccount(t, 'USD_ACCOUNT');
    const theirDestination = await platformAccount(other, 'USD');
    const theirSource = await externalAccount(other, 'USD_ACCOUNT');
    for (const [from, to, field, id] of [
      [
        'ExternalAccount:0193f1d2-0000-7000-8000-000000000000',
        destination.id,
        'source.accountId',
        'ExternalAccount:0193f1d2-0000-7000-8000-000000000000',
      ],
      [theirSource.id, destination.id, 'source.accountId', theirSource.id],
      [
        source.id,
        'InternalAccount:0193f1d2-0000-7000-8000-000000000000',
        'destination.accountId',
        'InternalAccount:0193f1d2-0000-7000-8000-000000000000',
      ],
      [source.id, theirDestination.id, 'destination.accountId', theirDestination.id],
    ]) {
      const reply = await transferIn(t, from!, to!, 100);
      expect(reply.status, field).toBe(404);
      expect(reply.body).toEqual({
        status: 404,
        code: 'REFERENCE_NOT_FOUND',
        message: `No ${field === 'source.accountId' ? 'external' : 'internal'} account ${id}`,
        details: { field },
      });
    }
    expect((await t.api('GET', '/transactions')).body.totalCount).toBe(0);
    expect(await balances(t, destination.id)).toEqual({ balance: 0, totalBalance: 0 });
  });

  it('lists every invalid field of a body at once', async () => {
    const t = await build();
    const empty = await t.api('POST', '/transfer-in', {
      body: { source: {}, destination: { accountId: '' }, amount: 0 },
    });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({
      status: 400,
      code: 'INVALID_INPUT',
      message: '3 fields are invalid: source.accountId, destination.accountId, amount',
      details: {
        errors: [
          { field: 'source.accountId', message: 'is required' },
          {
            field: 'destination.accountId',
            constraint: { minLength: 1 },
            message: 'must be at least 1 characters long',
          },
          { field: 'amount', message: 'must be at least 1' },
        ],
      },
    });
    const mistyped = await t.api('POST', '/transfer-in', { body: { source: { accountId: 7 }, amount: 'ten' } });
    expect(mistyped.body.details.errors).toEqual([
      { field: 'destination', message: 'is required' },
      { field: 'source.accountId', message: 'must be a string' },
      { field: 'amount', message: 'must be an integer' },
    ]);
    const fraction = await t.api('POST', '/transfer-in', {
      body: { source: { accountId: 'a' }, destination: { accountId: 'b' }, amount: 1.5 },
    });
    expect(fraction.body.details.errors.map((e: any) => e.field)).toEqual(['amount']);
  });

  it('cannot pull from a wallet', async () => {
    const t = await build();
    const usdc = await platformAccount(t, 'USDC');
    const wallet = await externalAccount(t, 'SOLANA_WALLET');
    const reply = await transferIn(t, wallet.id, usdc.id, 100);
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([
      expect.objectContaining({ field: 'source.accountId', message: expect.stringContaining('cannot be pulled from') }),
    ]);
  });
});

describe('INTERNAL_ACCOUNT.BALANCE_UPDATED on transfers', () => {
  /** [balance, totalBalance] of each balance event of the account, oldest first. */
  const balanceEvents = async (t: TestApp, accountId: string) =>
    (await eventsOf(t, accountId)).map((e) => {
      expect(e.type).toBe('INTERNAL_ACCOUNT.BALANCE_UPDATED');
      return [e.data.balance.amount, e.data.totalBalance.amount];
    });
  /** The newest event shows the account exactly as the list shows it now. */
  const expectLatestIsCurrent = async (t: TestApp, accountId: string) => {
    const latest = (await eventsOf(t, accountId)).at(-1)!.data;
    expect(latest).toEqual(
      (await t.api('GET', '/platform/internal-accounts?currency=USD')).body.data.find((a: any) => a.id === accountId),
    );
  };

  it('on the hold and on its release when a 005 transfer-out fails after 30 s', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 50_000);
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    expect((await transferOut(t, usd.id, slow.id, 20_000)).body.status).toBe('PROCESSING');
    expect(await balanceEvents(t, usd.id)).toEqual([
      [50_000, 50_000],
      [30_000, 50_000],
    ]);
    await t.advanceClock(29);
    expect(await balanceEvents(t, usd.id)).toHaveLength(2);
    await t.advanceClock(2);
    expect(await balanceEvents(t, usd.id)).toEqual([
      [50_000, 50_000],
      [30_000, 50_000],
      [50_000, 50_000],
    ]);
    await expectLatestIsCurrent(t, usd.id);
  });

  it('on the hold and on its release when a transfer-out is cancelled', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 50_000);
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const pending = (await transferOut(t, usd.id, slow.id, 5_000)).body;
    expect(await balanceEvents(t, usd.id)).toEqual([
      [50_000, 50_000],
      [45_000, 50_000],
    ]);
    expect((await t.api('POST', `/transactions/${pending.id}/cancel`)).status).toBe(200);
    expect(await balanceEvents(t, usd.id)).toEqual([
      [50_000, 50_000],
      [45_000, 50_000],
      [50_000, 50_000],
    ]);
    await expectLatestIsCurrent(t, usd.id);
  });

  it('on a transfer-in: the pending credit in the total only, a completed one available at once', async () => {
    const t = await build();
    const usd = await platformAccount(t, 'USD');
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
    expect((await transferIn(t, slow.id, usd.id, 700)).body.status).toBe('PENDING');
    expect(await balanceEvents(t, usd.id)).toEqual([[0, 700]]);
    await expectLatestIsCurrent(t, usd.id);
    // Accepted and completed in one transaction: one event, with the money available.
    expect((await transferIn(t, bank.id, usd.id, 300)).body.status).toBe('COMPLETED');
    expect(await balanceEvents(t, usd.id)).toEqual([
      [0, 700],
      [300, 1_000],
    ]);
    await expectLatestIsCurrent(t, usd.id);
    // The pending pull fails after 30 s: its credit leaves the total.
    await t.advanceClock(31);
    expect(await balanceEvents(t, usd.id)).toEqual([
      [0, 700],
      [300, 1_000],
      [300, 300],
    ]);
    await expectLatestIsCurrent(t, usd.id);
  });
});

// Every transfer suffix, in both directions, with the clock advanced instead of waited on.
// Rows: suffix, transfer-out statuses (at creation, after 29 s, after 31 s) and failure
// reason, transfer-in statuses and failure reason.
const SUFFIX_TABLE = [
  ['000', ['COMPLETED', 'COMPLETED', 'COMPLETED'], undefined, ['COMPLETED', 'COMPLETED', 'COMPLETED'], undefined],
  ['001', ['COMPLETED', 'COMPLETED', 'COMPLETED'], undefined, ['COMPLETED', 'COMPLETED', 'COMPLETED'], undefined],
  ['002', ['FAILED', 'FAILED', 'FAILED'], 'LIMIT_EXCEEDED', ['FAILED', 'FAILED', 'FAILED'], 'COLLECTION_FAILED'],
  ['003', ['FAILED', 'FAILED', 'FAILED'], 'ACCOUNT_INVALID', ['FAILED', 'FAILED', 'FAILED'], 'COLLECTION_FAILED'],
  [
    '004',
    ['FAILED', 'FAILED', 'FAILED'],
    'ACCOUNT_CANNOT_RECEIVE',
    ['FAILED', 'FAILED', 'FAILED'],
    'COLLECTION_FAILED',
  ],
  [
    '005',
    ['PROCESSING', 'PROCESSING', 'FAILED'],
    'QUOTE_EXECUTION_FAILED',
    ['PENDING', 'PENDING', 'FAILED'],
    'COLLECTION_FAILED',
  ],
  ['102', ['COMPLETED', 'COMPLETED', 'COMPLETED'], undefined, ['COMPLETED', 'COMPLETED', 'COMPLETED'], undefined],
] as const;

describe('transfer scenarios by the external account suffix', () => {
  it('covers every row of the magic table', () => {
    expect(TRANSFER_SCENARIOS.map((row) => row.suffix)).toEqual(
      SUFFIX_TABLE.filter((r) => /^00[2-5]$/.test(r[0])).map((r) => r[0]),
    );
  });

  it.each(SUFFIX_TABLE)('suffix %s', async (suffix, outStatuses, outReason, inStatuses, inReason) => {
    const t = await build();
    const usd = await fundedUsd(t, 100_000);
    const external = await externalAccount(t, 'USD_ACCOUNT', suffix);
    const out = await transferOut(t, usd.id, external.id, 10_000);
    const incoming = await transferIn(t, external.id, usd.id, 3_000);
    expect([out.status, incoming.status]).toEqual([201, 201]);
    const observe = async () => {
      const o = (await t.api('GET', `/transactions/${out.body.id}`)).body;
      const i = (await t.api('GET', `/transactions/${incoming.body.id}`)).body;
      return { o, i, balances: await balances(t, usd.id) };
    };
    const expectState = (state: Awaited<ReturnType<typeof observe>>, step: 0 | 1 | 2) => {
      expect(state.o.status).toBe(outStatuses[step]);
      expect(state.i.status).toBe(inStatuses[step]);
      expect(state.o.failureReason).toBe(outStatuses[step] === 'FAILED' ? outReason : undefined);
      expect(state.i.failureReason).toBe(inStatuses[step] === 'FAILED' ? inReason : undefined);
      const outSettled = outStatuses[step] === 'COMPLETED' ? 10_000 : 0;
      const outHeld = outStatuses[step] === 'PROCESSING' ? 10_000 : 0;
      const inAvailable = inStatuses[step] === 'COMPLETED' ? 3_000 : 0;
      const inPending = inStatuses[step] === 'PENDING' ? 3_000 : 0;
      expect(state.balances).toEqual({
        balance: 100_000 - outSettled - outHeld + inAvailable,
        totalBalance: 100_000 - outSettled + inAvailable + inPending,
      });
      expect(state.o.settledAt === undefined).toBe(outStatuses[step] !== 'COMPLETED');
    };
    expect(out.body.status).toBe(outStatuses[0]);
    expectState(await observe(), 0);
    await t.advanceClock(29);
    expectState(await observe(), 1);
    await t.advanceClock(2);
    expectState(await observe(), 2);
    await expectBalancedBooks(t);

    const outEvents = (await eventsOf(t, out.body.id)).map((e) => e.type.replace('OUTGOING_PAYMENT.', ''));
    const inEvents = (await eventsOf(t, incoming.body.id)).map((e) => e.type.replace('INCOMING_PAYMENT.', ''));
    expect(outEvents).toEqual(['PROCESSING', outStatuses[2]]);
    expect(inEvents).toEqual(['PENDING', inStatuses[2]]);
    // Failures release the hold in the ledger, never settle it.
    const kinds = await t.deps.db.k
      .selectFrom('ledger_postings')
      .select('kind')
      .where('transaction_id', '=', out.body.id)
      .orderBy('id')
      .execute();
    expect(kinds.map((k) => k.kind)).toEqual(['HOLD', outStatuses[2] === 'COMPLETED' ? 'SETTLE' : 'RELEASE']);
    // A pull is credited as pending when accepted, then made available or taken back.
    const inKinds = await t.deps.db.k
      .selectFrom('ledger_postings')
      .select('kind')
      .where('transaction_id', '=', incoming.body.id)
      .orderBy('id')
      .execute();
    expect(inKinds.map((k) => k.kind)).toEqual([
      'INCOMING_ACCEPT',
      inStatuses[2] === 'COMPLETED' ? 'INCOMING_COMPLETE' : 'INCOMING_FAIL',
    ]);
  });

  it('records a delayed outcome when it runs: after a long advance, at the new time, never before a change already recorded', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 50_000);
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const created = (await transferOut(t, usd.id, slow.id, 20_000)).body;
    const advanced = await t.advanceClock(3600);
    const after = (await t.api('GET', `/transactions/${created.id}`)).body;
    expect(after).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED' });
    // Run by the advance, at the platform's new time (the advance answers a moment later).
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.createdAt) + 3_600_000);
    expect(Date.parse(after.updatedAt)).toBeLessThanOrEqual(Date.parse(advanced.now));
    const failed = (await eventsOf(t, created.id)).find((e) => e.type === 'OUTGOING_PAYMENT.FAILED')!;
    expect(failed.data.updatedAt).toBe(after.updatedAt);
    expect(await balances(t, usd.id)).toEqual({ balance: 50_000, totalBalance: 50_000 });
  });

  it('records a late outcome when it runs, so the newest balance event is the newest balance', async () => {
    // The wall clock moves an hour with no job running (a stopped server, say), and another
    // payment changes the account meanwhile; the 005 failure then runs after it.
    const clock = new ManualClock(Date.parse('2026-03-02T00:00:00.000Z'));
    const t = await build({ clock });
    const usd = await fundedUsd(t, 50_000);
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
    const late = (await transferOut(t, usd.id, slow.id, 20_000)).body;
    clock.advance(3_600_000);
    const paid = (await transferOut(t, usd.id, bank.id, 1_000)).body;
    expect(await t.runDueJobs()).toBe(1);
    const after = (await t.api('GET', `/transactions/${late.id}`)).body;
    expect(after).toMatchObject({ status: 'FAILED', updatedAt: paid.createdAt });
    const account = (await t.api('GET', '/platform/internal-accounts?currency=USD')).body.data.find(
      (a: { id: string }) => a.id === usd.id,
    );
    expect(account).toMatchObject({ balance: { amount: 49_000 }, updatedAt: paid.createdAt });
    const updates = (await eventsOf(t, usd.id)).filter((e) => e.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED');
    expect(updates.at(-1)!.data.balance.amount).toBe(49_000);
  });

  it('reads the suffix of the user part of an identifier with a domain (PIX email keys)', async () => {
    const t = await build();
    const config = (await t.api('GET', '/config')).body;
    const brl = {
      currencyCode: 'BRL',
      minAmount: 1,
      maxAmount: 1_000_000,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
    };
    await t.api('PATCH', '/config', { body: { supportedCurrencies: [...config.supportedCurrencies, brl] } });
    const account = await platformAccount(t, 'BRL');
    await fund(t, account.id, 10_000);
    const pix = await externalAccount(t, 'BRL_ACCOUNT', '003');
    expect(pix.accountInfo.pixKey).toMatch(/003@pix\.example\.com$/);
    const reply = await transferOut(t, account.id, pix.id, 1_000);
    expect(reply.body).toMatchObject({ status: 'FAILED', failureReason: 'ACCOUNT_INVALID', paymentRail: 'PIX' });
  });
});

describe('Idempotency-Key on transfers', () => {
  it('replays the stored answer byte for byte and moves the money once', async () => {
    const t = await build();
    const source = await fundedUsd(t, 10_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const headers = { 'idempotency-key': 'payout-2026-001' };
    const first = await transferOut(t, source.id, destination.id, 4_000, headers);
    const again = await transferOut(t, source.id, destination.id, 4_000, headers);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await balances(t, source.id)).toEqual({ balance: 6_000, totalBalance: 6_000 });
    const other = await transferOut(t, source.id, destination.id, 4_001, headers);
    expect(other.status).toBe(400);
    expect(other.body.details.errors[0].field).toBe('Idempotency-Key');
    // Keys are per operation: the same key on transfer-in is a new request.
    const pulled = await transferIn(t, destination.id, source.id, 1_000, headers);
    expect(pulled.status).toBe(201);
    expect((await t.api('GET', '/transactions')).body.totalCount).toBe(2);
  });

  it('does not store a refused request: the key works once funds arrive', async () => {
    const t = await build();
    const source = await platformAccount(t, 'USD');
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const headers = { 'idempotency-key': 'retry-after-funding' };
    expect((await transferOut(t, source.id, destination.id, 500, headers)).status).toBe(400);
    await fund(t, source.id, 500);
    expect((await transferOut(t, source.id, destination.id, 500, headers)).body.status).toBe('COMPLETED');
  });
});
