// Executing a quote to an external account, for every row of the sandbox's quote-execution
// table (destination suffixes 002..007) and the default: the quote's and the transaction's
// status at execution and after the sandbox clock passes the timelines, failure reason,
// refund, the ordered OUTGOING_PAYMENT events, the source account's balances at each step,
// the ledger postings of the transaction, and balanced books after each flow.

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  PULL_SOURCE_SCENARIOS,
  QUOTE_EXECUTION_SCENARIOS,
  SPARK_QUOTE_EXECUTION_SCENARIOS,
} from '../../src/rails/magic.js';
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
} from '../fixtures/money.js';
import {
  accountQuoteBody,
  buildAtStart,
  counts,
  createQuote,
  executeQuote,
  postingKinds,
  quoteOf,
  START_MS,
  systemAccount,
  transactionOf,
} from '../fixtures/quotes.js';
import { databaseUrl, type TestApp } from '../helper.js';

const FUNDED = 1_000_000;
const SENT = 10_000;

type Status = 'PROCESSING' | 'COMPLETED' | 'FAILED';
interface Stage {
  status: Status;
  failureReason?: string;
  refund?: { status: 'COMPLETED' | 'FAILED'; reason: 'TRANSACTION_FAILED' | 'USER_CANCELLATION' };
  events: string[];
  postings: string[];
  /** The source account's balance and totalBalance. */
  balance: number;
  totalBalance: number;
}

interface Expected {
  behaviour: string;
  atExecute: Stage;
  /** Seconds to advance the clock, and how the payment stands after. */
  later?: { seconds: number; stage: Stage };
  /** Money left waiting in the USD SUSPENSE account at the end. */
  suspense: number;
}

const P = (type: string) => `OUTGOING_PAYMENT.${type}`;
const START_EVENTS = [P('PENDING'), P('PROCESSING')];

// What each suffix must do, written from SERVICE-SPEC.md's quote-execution table.
const EXPECTED: Record<string, Expected> = {
  '002': {
    behaviour: 'execution fails: FAILED at once, nothing exchanged, the hold released',
    atExecute: {
      status: 'FAILED',
      failureReason: 'QUOTE_EXECUTION_FAILED',
      events: [...START_EVENTS, P('FAILED')],
      postings: ['HOLD', 'RELEASE'],
      balance: FUNDED,
      totalBalance: FUNDED,
    },
    suspense: 0,
  },
  '003': {
    behaviour: 'PROCESSING for about 6 minutes, then COMPLETED',
    atExecute: {
      status: 'PROCESSING',
      events: START_EVENTS,
      postings: ['HOLD'],
      balance: FUNDED - SENT,
      totalBalance: FUNDED,
    },
    later: {
      seconds: 6 * 60,
      stage: {
        status: 'COMPLETED',
        events: [...START_EVENTS, P('COMPLETED')],
        postings: ['HOLD', 'CONVERT', 'PAYOUT'],
        balance: FUNDED - SENT,
        totalBalance: FUNDED - SENT,
      },
    },
    suspense: 0,
  },
  '004': {
    behaviour: 'counterparty delivery fails: FAILED, refunded to the payer',
    atExecute: {
      status: 'FAILED',
      failureReason: 'ACCOUNT_CANNOT_RECEIVE',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
      events: [...START_EVENTS, P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')],
      postings: ['HOLD', 'RELEASE'],
      balance: FUNDED,
      totalBalance: FUNDED,
    },
    suspense: 0,
  },
  '005': {
    behaviour: 'COMPLETED, then returned by the receiving bank 30 seconds later: FAILED PAYOUT_RETURNED, refunded',
    atExecute: {
      status: 'COMPLETED',
      events: [...START_EVENTS, P('COMPLETED')],
      postings: ['HOLD', 'CONVERT', 'PAYOUT'],
      balance: FUNDED - SENT,
      totalBalance: FUNDED - SENT,
    },
    later: {
      seconds: 30,
      stage: {
        status: 'FAILED',
        failureReason: 'PAYOUT_RETURNED',
        refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
        events: [...START_EVENTS, P('COMPLETED'), P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')],
        postings: ['HOLD', 'CONVERT', 'PAYOUT', 'PAYOUT_RETURN', 'CONVERT_REVERSE'],
        balance: FUNDED,
        totalBalance: FUNDED,
      },
    },
    suspense: 0,
  },
  '006': {
    behaviour: 'user cancellation: refunded to the payer (USER_CANCELLATION), then closed COMPLETED',
    atExecute: {
      status: 'COMPLETED',
      refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
      events: [...START_EVENTS, P('REFUND_PENDING'), P('REFUND_COMPLETED'), P('COMPLETED')],
      postings: ['HOLD', 'RELEASE'],
      balance: FUNDED,
      totalBalance: FUNDED,
    },
    suspense: 0,
  },
  '007': {
    behaviour: 'payout and refund both fail: the funds wait in SUSPENSE',
    atExecute: {
      status: 'FAILED',
      failureReason: 'ACCOUNT_INVALID',
      refund: { status: 'FAILED', reason: 'TRANSACTION_FAILED' },
      events: [...START_EVENTS, P('FAILED'), P('REFUND_PENDING'), P('REFUND_FAILED')],
      postings: ['HOLD', 'REFUND_FAILED'],
      balance: FUNDED - SENT,
      totalBalance: FUNDED - SENT,
    },
    suspense: SENT,
  },
};

const DEFAULT: Expected = {
  behaviour: 'any other suffix: COMPLETED at once',
  atExecute: {
    status: 'COMPLETED',
    events: [...START_EVENTS, P('COMPLETED')],
    postings: ['HOLD', 'CONVERT', 'PAYOUT'],
    balance: FUNDED - SENT,
    totalBalance: FUNDED - SENT,
  },
  suspense: 0,
};

// Spark wallets (behaviours.md 1.3): 003 is an unavailable wallet, 005 a 30-second timeout;
// 002 and 004 are the bank failures; every other suffix succeeds.
const SPARK_EXPECTED: Record<string, Expected> = {
  '002': EXPECTED['002']!,
  '003': {
    behaviour: 'the wallet is unavailable: FAILED at once (ACCOUNT_CANNOT_RECEIVE), the hold released',
    atExecute: {
      status: 'FAILED',
      failureReason: 'ACCOUNT_CANNOT_RECEIVE',
      events: [...START_EVENTS, P('FAILED')],
      postings: ['HOLD', 'RELEASE'],
      balance: FUNDED,
      totalBalance: FUNDED,
    },
    suspense: 0,
  },
  '004': EXPECTED['004']!,
  '005': {
    behaviour: 'PROCESSING for 30 seconds, then FAILED (QUOTE_EXECUTION_FAILED), the hold released',
    atExecute: {
      status: 'PROCESSING',
      events: START_EVENTS,
      postings: ['HOLD'],
      balance: FUNDED - SENT,
      totalBalance: FUNDED,
    },
    later: {
      seconds: 30,
      stage: {
        status: 'FAILED',
        failureReason: 'QUOTE_EXECUTION_FAILED',
        events: [...START_EVENTS, P('FAILED')],
        postings: ['HOLD', 'RELEASE'],
        balance: FUNDED,
        totalBalance: FUNDED,
      },
    },
    suspense: 0,
  },
};

async function expectStage(
  t: TestApp,
  quoteId: string,
  transactionId: string,
  sourceId: string,
  stage: Stage,
  executedQuote?: any,
) {
  const quote = await quoteOf(t, quoteId);
  expect(quote.status).toBe(stage.status);
  if (executedQuote !== undefined) expect(executedQuote.status).toBe(stage.status);
  const tx = await transactionOf(t, transactionId);
  expect(tx.status).toBe(stage.status);
  expect(tx.failureReason).toBe(stage.failureReason);
  if (stage.refund === undefined) {
    expect(tx.refund).toBeUndefined();
  } else {
    expect(tx.refund).toEqual({
      reference: `${tx.reconciliationInstructions.reference}-R`,
      initiatedAt: expect.any(String),
      ...(stage.refund.status === 'COMPLETED' ? { settledAt: expect.any(String) } : {}),
      status: stage.refund.status,
      reason: stage.refund.reason,
    });
  }
  // A cancelled payment is closed COMPLETED, but it never settled with the receiver.
  const cancelled = stage.refund?.reason === 'USER_CANCELLATION';
  if (stage.status === 'COMPLETED') expect(tx.settledAt).toEqual(cancelled ? undefined : expect.any(String));
  const events = await eventsOf(t, transactionId);
  expect(events.map((e) => e.type)).toEqual(stage.events);
  // Every event carries the transaction as it was then; the last one as it is now.
  expect(events.at(-1)!.data).toEqual(tx);
  for (const event of events) {
    const state = event.type.slice('OUTGOING_PAYMENT.'.length);
    if (state.startsWith('REFUND_')) expect(event.data.refund.status).toBe(state.slice('REFUND_'.length));
    else expect(event.data.status).toBe(state);
  }
  expect(await postingKinds(t, transactionId)).toEqual(stage.postings);
  expect(await balances(t, sourceId)).toEqual({ balance: stage.balance, totalBalance: stage.totalBalance });
  await expectBalancedBooks(t);
}

/** Destinations by account type: the field of the primary identifier, the currency paid. */
const DESTINATIONS = {
  MXN_ACCOUNT: { identifier: 'clabeNumber', currency: 'MXN' },
  SPARK_WALLET: { identifier: 'address', currency: 'BTC' },
} as const;

async function runScenario(suffix: string, expected: Expected, accountType: keyof typeof DESTINATIONS = 'MXN_ACCOUNT') {
  const t = await buildAtStart();
  const source = await fundedUsd(t, FUNDED);
  const destination = await externalAccount(t, accountType, suffix);
  expect(destination.accountInfo[DESTINATIONS[accountType].identifier].slice(-3)).toBe(suffix);

  const created = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: SENT }));
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({
    status: 'PENDING',
    totalSendingAmount: SENT,
    sendingCurrency: { code: 'USD' },
    receivingCurrency: { code: DESTINATIONS[accountType].currency },
  });
  const { id: quoteId, transactionId } = created.body;
  expect((await transactionOf(t, transactionId)).status).toBe('PENDING');
  expect((await eventsOf(t, transactionId)).map((e) => e.type)).toEqual([P('PENDING')]);
  expect(await postingKinds(t, transactionId)).toEqual([]);
  expect(await balances(t, source.id)).toEqual({ balance: FUNDED, totalBalance: FUNDED });

  const executed = await executeQuote(t, quoteId);
  expect(executed.status).toBe(200);
  expect(executed.body).toEqual({ ...created.body, status: expected.atExecute.status });
  await expectStage(t, quoteId, transactionId, source.id, expected.atExecute, executed.body);

  if (expected.later !== undefined) {
    // One second short of the timeline nothing has moved yet.
    await t.advanceClock(expected.later.seconds - 1);
    await expectStage(t, quoteId, transactionId, source.id, expected.atExecute);
    await t.advanceClock(1);
    await expectStage(t, quoteId, transactionId, source.id, expected.later.stage);
  }
  // Long after, nothing else happens (the expiry job of an executed quote changes nothing).
  await t.advanceClock(3600);
  await expectStage(t, quoteId, transactionId, source.id, expected.later?.stage ?? expected.atExecute);
  expect((await systemAccount(t, 'SUSPENSE', 'USD'))!.available).toBe(BigInt(expected.suspense));
}

describe('quote execution to an external account, by destination suffix', () => {
  it('covers every row of the sandbox table', () => {
    expect(QUOTE_EXECUTION_SCENARIOS.map((row) => row.suffix).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const row of QUOTE_EXECUTION_SCENARIOS) {
    const expected = EXPECTED[row.suffix]!;
    it(`${row.suffix}: ${expected?.behaviour ?? row.behaviour}`, async () => {
      await runScenario(row.suffix, expected);
    });
  }

  for (const suffix of ['000', '001', '999']) {
    it(`${suffix}: ${DEFAULT.behaviour}`, async () => {
      await runScenario(suffix, DEFAULT);
    });
  }

  it('covers every row of the Spark table', () => {
    expect(SPARK_QUOTE_EXECUTION_SCENARIOS.map((row) => row.suffix).sort()).toEqual(Object.keys(SPARK_EXPECTED).sort());
  });

  for (const row of SPARK_QUOTE_EXECUTION_SCENARIOS) {
    const expected = SPARK_EXPECTED[row.suffix]!;
    it(`Spark wallet ${row.suffix}: ${expected?.behaviour ?? row.behaviour}`, async () => {
      await runScenario(row.suffix, expected, 'SPARK_WALLET');
    });
  }

  // The bank table's 003, 006 and 007 mean nothing for a Spark wallet: those payments succeed.
  for (const suffix of ['000', '006', '007']) {
    it(`Spark wallet ${suffix}: ${DEFAULT.behaviour}`, async () => {
      await runScenario(suffix, DEFAULT, 'SPARK_WALLET');
    });
  }

  it('a completed payout converts the funds: FEES keeps the fees, FX_LIQUIDITY the rest, the receiver gets the quoted amount', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, FUNDED);
    const destination = await externalAccount(t, 'EUR_ACCOUNT', '000');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: SENT }))).body;
    expect((await executeQuote(t, quote.id)).body.status).toBe('COMPLETED');
    expect(await systemAccount(t, 'FEES', 'USD')).toEqual({ available: BigInt(quote.feesIncluded), held: 0n });
    expect(await systemAccount(t, 'FX_LIQUIDITY', 'USD')).toEqual({
      available: BigInt(SENT - quote.feesIncluded),
      held: 0n,
    });
    expect(await systemAccount(t, 'FX_LIQUIDITY', 'EUR')).toEqual({
      available: BigInt(-quote.totalReceivingAmount),
      held: 0n,
    });
    expect(await systemAccount(t, 'EXTERNAL_RAILS', 'EUR')).toEqual({
      available: BigInt(quote.totalReceivingAmount),
      held: 0n,
    });
    const tx = await transactionOf(t, quote.transactionId);
    expect(tx).toMatchObject({
      type: 'OUTGOING',
      direction: 'DEBIT',
      status: 'COMPLETED',
      quoteId: quote.id,
      source: { sourceType: 'ACCOUNT', accountId: source.id, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: destination.id, currency: 'EUR' },
      sentAmount: { amount: SENT, currency: { code: 'USD' } },
      receivedAmount: { amount: quote.totalReceivingAmount, currency: { code: 'EUR' } },
      exchangeRate: quote.exchangeRate,
      fees: quote.feesIncluded,
      platformFees: 0,
      description: 'Invoice 2025-118 for Maria Lopez',
      paymentRail: 'SEPA',
      railSelectionMode: 'AUTO',
    });
    await expectBalancedBooks(t);
  });

  it('a 005 return of a customer payment refunds the customer account, not the platform one', async () => {
    const t = await buildAtStart();
    const platformUsd = await fundedUsd(t, FUNDED);
    const { customer, usd } = await customerWithAccounts(t);
    await fund(t, usd.id, 50_000);
    const mxn = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('MXN_ACCOUNT', '005'), customerId: customer.id },
    });
    expect(mxn.status).toBe(201);
    const quote = await createQuote(t, accountQuoteBody(usd.id, mxn.body.id, { amount: 20_000 }));
    expect(quote.status).toBe(201);
    expect((await executeQuote(t, quote.body.id)).body.status).toBe('COMPLETED');
    const customerBalance = async () => {
      const list = await t.api(
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`,
      );
      return { balance: list.body.data[0].balance.amount, totalBalance: list.body.data[0].totalBalance.amount };
    };
    expect(await customerBalance()).toEqual({ balance: 30_000, totalBalance: 30_000 });
    await t.advanceClock(600);
    expect(await customerBalance()).toEqual({ balance: 50_000, totalBalance: 50_000 });
    expect(await balances(t, platformUsd.id)).toEqual({ balance: FUNDED, totalBalance: FUNDED });
    const tx = await transactionOf(t, quote.body.transactionId);
    expect(tx).toMatchObject({
      status: 'FAILED',
      failureReason: 'PAYOUT_RETURNED',
      customerId: customer.id,
      refund: { status: 'COMPLETED' },
    });
    await expectBalancedBooks(t);
  });
  for (const spent of [false, true]) {
    it(`a 005 return with a platform fee refunds the customer in full and takes the fee back from the platform${spent ? ', even after the platform spent it' : ''}`, async () => {
      const t = await buildAtStart();
      await t.api('PATCH', '/config', {
        body: {
          feeConfigs: [
            {
              feeType: 'CROSS_CURRENCY_TRANSACTION',
              sourceCurrency: 'USD',
              variableFeeBps: 20,
              fixedFee: { amount: 25, currency: 'USD' },
            },
          ],
        },
      });
      const platformUsd = await fundedUsd(t, 1_000);
      const { customer, usd } = await customerWithAccounts(t);
      await fund(t, usd.id, 50_000);
      const mxn = await t.api('POST', '/customers/external-accounts', {
        body: { ...accountBody('MXN_ACCOUNT', '005'), customerId: customer.id },
      });
      const quote = (await createQuote(t, accountQuoteBody(usd.id, mxn.body.id, { amount: 20_000 }))).body;
      expect(quote.platformFeesIncluded).toBe(25 + 40);
      expect((await executeQuote(t, quote.id)).body.status).toBe('COMPLETED');
      expect(await balances(t, platformUsd.id)).toEqual({ balance: 1_065, totalBalance: 1_065 });
      if (spent) {
        const bank = await externalAccount(t, 'USD_ACCOUNT');
        const out = await t.api('POST', '/transfer-out', {
          body: { source: { accountId: platformUsd.id }, destination: { accountId: bank.id }, amount: 1_065 },
        });
        expect(out.body.status).toBe('COMPLETED');
      }
      await t.advanceClock(600);
      const tx = await transactionOf(t, quote.transactionId);
      expect(tx).toMatchObject({
        status: 'FAILED',
        failureReason: 'PAYOUT_RETURNED',
        refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
      });
      const list = await t.api(
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`,
      );
      expect([list.body.data[0].balance.amount, list.body.data[0].totalBalance.amount]).toEqual([50_000, 50_000]);
      // What the platform already spent is not taken back (its balance cannot go below zero): FEES absorbs it.
      expect(await balances(t, platformUsd.id)).toEqual(
        spent ? { balance: 0, totalBalance: 0 } : { balance: 1_000, totalBalance: 1_000 },
      );
      await expectBalancedBooks(t);
    });
  }
});

describe("POST /quotes/{quoteId}/execute checks the quote's accounts again", () => {
  /** Nothing moved: the quote is still PENDING, its transaction has no postings, the source holds what it held. */
  async function expectUntouched(t: TestApp, quote: any, sourceId: string, sourceBalance: number) {
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
    expect(await balances(t, sourceId)).toEqual({ balance: sourceBalance, totalBalance: sourceBalance });
    await expectBalancedBooks(t);
  }

  it('a destination deleted since the quote was made is a 400 naming destination.accountId, and nothing is paid', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, FUNDED);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: SENT }))).body;
    expect((await t.api('DELETE', `/platform/external-accounts/${destination.id}`)).status).toBe(204);
    const refused = await executeQuote(t, quote.id);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'INVALID_INPUT',
      details: {
        errors: [{ field: 'destination.accountId', message: `names ${destination.id}, which no longer exists` }],
      },
    });
    await expectUntouched(t, quote, source.id, FUNDED);
  });

  it('a pull source deleted since the quote was made is a 400 naming source.accountId', async () => {
    const t = await buildAtStart();
    const platformUsd = await fundedUsd(t, FUNDED);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, accountQuoteBody(bank.id, destination.id, { amount: SENT }))).body;
    expect((await t.api('DELETE', `/platform/external-accounts/${bank.id}`)).status).toBe(204);
    const refused = await executeQuote(t, quote.id);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'source.accountId', message: `names ${bank.id}, which no longer exists` }] },
    });
    await expectUntouched(t, quote, platformUsd.id, FUNDED);
  });

  it('a source internal account no longer ACTIVE is a 400 naming source.accountId', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, FUNDED);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: SENT }))).body;
    // No operation freezes an internal account yet: the state is set in the store.
    await t.deps.db.k.updateTable('internal_accounts').set({ status: 'FROZEN' }).where('id', '=', source.id).execute();
    const refused = await executeQuote(t, quote.id);
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([{ field: 'source.accountId', message: 'is FROZEN' }]);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
  });

  it('covers every row of the pull-source table', () => {
    expect(PULL_SOURCE_SCENARIOS.map((row) => row.suffix)).toEqual(['002']);
  });

  it('a pull from a bank account ending 002 finds no funds: 400 INVALID_AMOUNT, the quote stays PENDING; with immediatelyExecute nothing is created', async () => {
    const t = await buildAtStart();
    const platformUsd = await fundedUsd(t, FUNDED);
    const empty = await externalAccount(t, 'USD_ACCOUNT', '002');
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = await createQuote(t, accountQuoteBody(empty.id, destination.id, { amount: SENT }));
    expect(quote.status).toBe(201);
    const refused = await executeQuote(t, quote.body.id);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'INVALID_AMOUNT',
      details: {
        reason: 'INSUFFICIENT_BALANCE',
        errors: [{ field: 'source.accountId', message: 'has insufficient funds for this payment' }],
      },
    });
    await expectUntouched(t, quote.body, platformUsd.id, FUNDED);
    const before = await counts(t);
    const immediate = await createQuote(
      t,
      accountQuoteBody(empty.id, destination.id, { amount: SENT, extra: { immediatelyExecute: true } }),
    );
    expect(immediate.status).toBe(400);
    expect(immediate.body.code).toBe('INVALID_AMOUNT');
    expect(await counts(t)).toEqual(before);
    // The same pull from an account with another suffix goes through.
    const funded = await externalAccount(t, 'USD_ACCOUNT', '000');
    const paid = await createQuote(
      t,
      accountQuoteBody(funded.id, destination.id, { amount: SENT, extra: { immediatelyExecute: true } }),
    );
    expect(paid.body.status).toBe('COMPLETED');
    expect(await postingKinds(t, paid.body.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    await expectBalancedBooks(t);
  });

  it('a real-time-funded quote whose destination was deleted cannot be paid through /sandbox/send', async () => {
    const t = await buildAtStart();
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (
      await createQuote(t, {
        source: { sourceType: 'REALTIME_FUNDING', currency: 'USD' },
        destination: { destinationType: 'ACCOUNT', accountId: destination.id },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: SENT,
      })
    ).body;
    await t.api('DELETE', `/platform/external-accounts/${destination.id}`);
    const refused = await t.api('POST', '/sandbox/send', { body: { quoteId: quote.id, currencyCode: 'USD' } });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      { field: 'destination.accountId', message: `names ${destination.id}, which no longer exists` },
    ]);
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
  });
});

// Money from outside (real-time funding, a pull from an external bank account, or a push from
// one through /sandbox/send) arrives in the ledger's SUSPENSE account at execution and leaves
// it by the payout, or by a refund to the payer: there is no internal account to hold or
// release.
interface OutsideStage {
  status: Status;
  failureReason?: string;
  refund?: { status: 'COMPLETED' | 'FAILED'; reason: 'TRANSACTION_FAILED' | 'USER_CANCELLATION' };
  /** Events after OUTGOING_PAYMENT.PENDING and .PROCESSING. */
  events: string[];
  postings: string[];
  /** What waits in USD SUSPENSE. */
  suspense: number;
}

const RECEIVED = 'FUNDING_RECEIVED';
const OUTSIDE_EXPECTED: Record<string, { atExecute: OutsideStage; later?: { seconds: number; stage: OutsideStage } }> =
  {
    '000': {
      atExecute: {
        status: 'COMPLETED',
        events: [P('COMPLETED')],
        postings: [RECEIVED, 'CONVERT', 'PAYOUT'],
        suspense: 0,
      },
    },
    '002': {
      atExecute: {
        status: 'FAILED',
        failureReason: 'QUOTE_EXECUTION_FAILED',
        refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
        events: [P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')],
        postings: [RECEIVED, 'REFUND'],
        suspense: 0,
      },
    },
    '003': {
      atExecute: { status: 'PROCESSING', events: [], postings: [RECEIVED], suspense: SENT },
      later: {
        seconds: 6 * 60,
        stage: {
          status: 'COMPLETED',
          events: [P('COMPLETED')],
          postings: [RECEIVED, 'CONVERT', 'PAYOUT'],
          suspense: 0,
        },
      },
    },
    '004': {
      atExecute: {
        status: 'FAILED',
        failureReason: 'ACCOUNT_CANNOT_RECEIVE',
        refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
        events: [P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')],
        postings: [RECEIVED, 'REFUND'],
        suspense: 0,
      },
    },
    '005': {
      atExecute: {
        status: 'COMPLETED',
        events: [P('COMPLETED')],
        postings: [RECEIVED, 'CONVERT', 'PAYOUT'],
        suspense: 0,
      },
      later: {
        seconds: 30,
        stage: {
          status: 'FAILED',
          failureReason: 'PAYOUT_RETURNED',
          refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
          events: [P('COMPLETED'), P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')],
          postings: [RECEIVED, 'CONVERT', 'PAYOUT', 'PAYOUT_RETURN', 'CONVERT_REVERSE', 'REFUND'],
          suspense: 0,
        },
      },
    },
    '006': {
      atExecute: {
        status: 'COMPLETED',
        refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
        events: [P('REFUND_PENDING'), P('REFUND_COMPLETED'), P('COMPLETED')],
        postings: [RECEIVED, 'REFUND'],
        suspense: 0,
      },
    },
    // The refund fails: the money stays in SUSPENSE, where it arrived.
    '007': {
      atExecute: {
        status: 'FAILED',
        failureReason: 'ACCOUNT_INVALID',
        refund: { status: 'FAILED', reason: 'TRANSACTION_FAILED' },
        events: [P('FAILED'), P('REFUND_PENDING'), P('REFUND_FAILED')],
        postings: [RECEIVED],
        suspense: SENT,
      },
    },
  };

describe('quote execution with money from outside, by destination suffix', () => {
  async function expectOutsideStage(t: TestApp, quoteId: string, transactionId: string, stage: OutsideStage) {
    expect((await quoteOf(t, quoteId)).status).toBe(stage.status);
    const tx = await transactionOf(t, transactionId);
    expect([tx.status, tx.failureReason, tx.refund?.status, tx.refund?.reason]).toEqual([
      stage.status,
      stage.failureReason,
      stage.refund?.status,
      stage.refund?.reason,
    ]);
    expect((await eventsOf(t, transactionId)).map((e) => e.type)).toEqual([...START_EVENTS, ...stage.events]);
    expect(await postingKinds(t, transactionId)).toEqual(stage.postings);
    expect((await systemAccount(t, 'SUSPENSE', 'USD'))!.available).toBe(BigInt(stage.suspense));
    await expectBalancedBooks(t);
  }

  const sources = {
    'real-time funding': async (t: TestApp, destinationId: string) => {
      const quote = (
        await createQuote(t, {
          source: { sourceType: 'REALTIME_FUNDING', currency: 'USD' },
          destination: { destinationType: 'ACCOUNT', accountId: destinationId },
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: SENT,
        })
      ).body;
      const paid = await t.api('POST', '/sandbox/send', { body: { quoteId: quote.id, currencyCode: 'USD' } });
      expect(paid.status).toBe(200);
      return quote;
    },
    'a pull from an external bank account': async (t: TestApp, destinationId: string) => {
      const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
      const quote = (await createQuote(t, accountQuoteBody(bank.id, destinationId, { amount: SENT }))).body;
      expect((await executeQuote(t, quote.id)).status).toBe(200);
      return quote;
    },
    'a push from an external bank account (POST /sandbox/send)': async (t: TestApp, destinationId: string) => {
      const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
      const quote = (await createQuote(t, accountQuoteBody(bank.id, destinationId, { amount: SENT }))).body;
      const paid = await t.api('POST', '/sandbox/send', { body: { quoteId: quote.id, currencyCode: 'USD' } });
      expect(paid.status).toBe(200);
      return quote;
    },
  };

  for (const [sourceName, pay] of Object.entries(sources)) {
    for (const [suffix, expected] of Object.entries(OUTSIDE_EXPECTED)) {
      it(`${sourceName}, destination ${suffix}: ${expected.atExecute.status}${expected.later ? ` then ${expected.later.stage.status}` : ''}`, async () => {
        const t = await buildAtStart();
        const destination = await externalAccount(t, 'MXN_ACCOUNT', suffix);
        const quote = await pay(t, destination.id);
        await expectOutsideStage(t, quote.id, quote.transactionId, expected.atExecute);
        if (expected.later !== undefined) {
          await t.advanceClock(expected.later.seconds - 1);
          await expectOutsideStage(t, quote.id, quote.transactionId, expected.atExecute);
          await t.advanceClock(1);
          await expectOutsideStage(t, quote.id, quote.transactionId, expected.later.stage);
        }
      });
    }
  }
});

describe('POST /quotes/{quoteId}/execute re-checks under concurrency and for internal destinations', () => {
  it('an internal destination no longer ACTIVE is a 400 naming destination.accountId', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, FUNDED);
    const usdc = await platformAccount(t, 'USDC');
    const quote = (await createQuote(t, accountQuoteBody(source.id, usdc.id, { amount: SENT }))).body;
    // No operation freezes an internal account yet: the state is set in the store.
    await t.deps.db.k.updateTable('internal_accounts').set({ status: 'FROZEN' }).where('id', '=', usdc.id).execute();
    const refused = await executeQuote(t, quote.id);
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([{ field: 'destination.accountId', message: 'is FROZEN' }]);
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
  });

  it.skipIf(!databaseUrl)(
    'on PostgreSQL, an execute that meets a delete of its destination in progress waits for it, then refuses',
    async () => {
      const t = await buildAtStart();
      const source = await fundedUsd(t, FUNDED);
      const destination = await externalAccount(t, 'MXN_ACCOUNT');
      const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: SENT }))).body;
      let started!: () => void;
      const deleteStarted = new Promise<void>((resolve) => (started = resolve));
      // What DELETE /platform/external-accounts/{id} writes, held open while the execute arrives.
      const deleting = t.deps.db.transaction(async (tx) => {
        await tx
          .updateTable('external_accounts')
          .set({ deleted_at: new Date(START_MS).toISOString() })
          .where('id', '=', destination.id)
          .execute();
        started();
        await sleep(300);
      });
      await deleteStarted;
      const refused = await executeQuote(t, quote.id);
      await deleting;
      expect(refused.status).toBe(400);
      expect(refused.body.details.errors).toEqual([
        { field: 'destination.accountId', message: `names ${destination.id}, which no longer exists` },
      ]);
      expect(await postingKinds(t, quote.transactionId)).toEqual([]);
      await expectBalancedBooks(t);
    },
  );
});
