// POST /sandbox/send for a quote funded from an external bank account: the sandbox's stand-in
// for the customer's own transfer from that account (the hosted sandbox's way, see
// docs/hosted-differences.md). The checks of currency and amount are those of real-time
// funding; refusals (another currency, a bad amount, a second payment, an expired quote, an
// unknown quote) move nothing; concurrent sends pay once. POST /quotes/{quoteId}/execute still
// pulls such a quote, except in strict mode, where it is refused and names /sandbox/send.
// On the store under test (SQLite, or PostgreSQL with DATABASE_URL).

import { describe, expect, it } from 'vitest';
import { ACCOUNT_TYPES } from '../../src/modules/external-accounts/account-types.js';
import { ratedCurrencies } from '../../src/rates/index.js';
import { connectedAgent } from '../fixtures/agents.js';
import { accountBody } from '../fixtures/accounts.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { eventsOf, expectBalancedBooks, externalAccount, fundedUsd, platformAccount } from '../fixtures/money.js';
import {
  accountQuoteBody,
  buildAtStart,
  counts,
  createQuote,
  executeQuote,
  postingKinds,
  quoteOf,
  systemAccount,
  transactionOf,
} from '../fixtures/quotes.js';
import { euCustomer, scaLogin } from '../fixtures/sca.js';
import type { ManualClock } from '../../src/clock.js';
import type { Tenant, TestApp } from '../helper.js';

const P = (type: string) => `OUTGOING_PAYMENT.${type}`;
const SENT = 20_000;

function send(t: Tenant, body: unknown, headers: Record<string, string> = {}) {
  return t.api('POST', '/sandbox/send', { body, headers });
}

/** A quote from a platform USD bank account (ending `sourceSuffix`) to a platform MXN bank account (ending `destinationSuffix`). */
async function pushQuote(t: TestApp, options: { sourceSuffix?: string; destinationSuffix?: string } = {}) {
  const bank = await externalAccount(t, 'USD_ACCOUNT', options.sourceSuffix ?? '000');
  const destination = await externalAccount(t, 'MXN_ACCOUNT', options.destinationSuffix ?? '000');
  const reply = await createQuote(t, accountQuoteBody(bank.id, destination.id, { amount: SENT }));
  expect(reply.status, reply.text).toBe(201);
  return { quote: reply.body, bank, destination };
}

/** What a refusal must leave as it was: the tables' counts, every ledger balance, the quote, its events. */
async function state(t: TestApp, quoteId: string) {
  const ledger = await t.raw('GET', '/_railyard/ledger');
  const quote = await quoteOf(t, quoteId);
  return {
    counts: await counts(t),
    balances: Object.fromEntries(ledger.body.accounts.map((a: any) => [a.id, [a.available, a.held]])),
    quote,
    events: (await eventsOf(t, quote.transactionId)).map((e) => e.type),
  };
}

describe('POST /sandbox/send with a quote funded from an external bank account', () => {
  it('pays the quote: the transaction runs PENDING -> PROCESSING -> COMPLETED through SUSPENSE to the destination', async () => {
    const t = await buildAtStart();
    const { quote, bank, destination } = await pushQuote(t);
    expect(quote.paymentInstructions).toHaveLength(1);
    expect(quote.paymentInstructions[0]).toMatchObject({
      isPlatformAccount: true,
      accountOrWalletInfo: { accountType: 'USD_ACCOUNT', paymentRails: ['ACH', 'WIRE'] },
    });
    const sent = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: SENT });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({
      id: quote.transactionId,
      status: 'COMPLETED',
      quoteId: quote.id,
      source: { sourceType: 'ACCOUNT', accountId: bank.id, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: destination.id, currency: 'MXN' },
      sentAmount: { amount: SENT },
      receivedAmount: { amount: quote.totalReceivingAmount },
    });
    expect(sent.body.settledAt).toBeDefined();
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PROCESSING'),
      P('COMPLETED'),
    ]);
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 0n, held: 0n });
    expect(await systemAccount(t, 'EXTERNAL_RAILS', 'MXN')).toEqual({
      available: BigInt(quote.totalReceivingAmount),
      held: 0n,
    });
    await expectBalancedBooks(t);
  });

  it('refuses another currency (400 INVALID_CURRENCY), a bad amount (400 naming currencyAmount) and an unknown quote (404), moving nothing', async () => {
    const t = await buildAtStart();
    const { quote } = await pushQuote(t);
    const before = await state(t, quote.id);

    const currency = await send(t, { quoteId: quote.id, currencyCode: 'EUR', currencyAmount: SENT });
    expect(currency.status).toBe(400);
    expect(currency.body).toMatchObject({
      status: 400,
      code: 'INVALID_CURRENCY',
      details: { errors: [{ field: 'currencyCode', message: "must be USD, the quote's funding currency" }] },
    });
    for (const amount of [0, -SENT, 200.5, String(SENT)]) {
      const refused = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: amount });
      expect(refused.status, `currencyAmount ${amount}`).toBe(400);
      expect(refused.body.code).toBe('INVALID_INPUT');
      expect(refused.body.details.errors.map((e: any) => e.field)).toEqual(['currencyAmount']);
    }
    const unknown = await send(t, { quoteId: 'Quote:0193f1d2-0000-7000-8000-000000000000', currencyCode: 'USD' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('QUOTE_NOT_FOUND');
    // Another platform's quote does not exist here.
    const other = await t.newPlatform();
    const foreign = await send(other, { quoteId: quote.id, currencyCode: 'USD' });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('QUOTE_NOT_FOUND');

    expect(await state(t, quote.id)).toEqual(before);
    expect(before.quote.status).toBe('PENDING');
    // The quote is still payable after the refusals.
    expect((await send(t, { quoteId: quote.id, currencyCode: 'USD' })).body.status).toBe('COMPLETED');
  });

  it('refuses a second payment with 400 and moves nothing, with or without an Idempotency-Key (the operation takes none)', async () => {
    const t = await buildAtStart();
    const { quote } = await pushQuote(t);
    const headers = { 'idempotency-key': 'push-once' };
    const first = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: SENT }, headers);
    expect(first.body.status).toBe('COMPLETED');
    const after = await state(t, quote.id);
    for (const repeat of [headers, {}]) {
      const again = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: SENT }, repeat);
      expect(again.status).toBe(400);
      expect(again.body).toMatchObject({
        code: 'INVALID_INPUT',
        details: {
          errors: [{ field: 'quoteId', message: `Quote ${quote.id} was already executed (it is COMPLETED)` }],
        },
      });
    }
    // Executing it afterwards is the 409 of an executed quote.
    const execute = await executeQuote(t, quote.id);
    expect(execute.status).toBe(409);
    expect(execute.body.code).toBe('CONFLICT');
    expect(await state(t, quote.id)).toEqual(after);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
  });

  it('refuses an expired quote with 400 and moves nothing, at expiresAt even before the expiry job ran', async () => {
    const t = await buildAtStart();
    const { quote } = await pushQuote(t);
    // MXN over SPEI is not instant: 15 minutes.
    expect(Date.parse(quote.expiresAt) - Date.parse(quote.createdAt)).toBe(15 * 60 * 1000);
    await t.advanceClock(15 * 60 - 1);
    const before = await state(t, quote.id);
    expect(before.quote.status).toBe('PENDING');
    // One second on, the expiry is due. The server's clock moves without running the job: the
    // send is refused all the same, and nothing has moved.
    (t.deps.clock as ManualClock).advance(1000);
    const refused = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      { field: 'quoteId', message: `Quote ${quote.id} expired at ${quote.expiresAt}; create a new quote` },
    ]);
    expect(await state(t, quote.id)).toEqual(before);
    // Once the job has run, the quote is EXPIRED and still not payable.
    expect(await t.runDueJobs()).toBeGreaterThan(0);
    expect(await transactionOf(t, quote.transactionId)).toMatchObject({
      status: 'EXPIRED',
      failureReason: 'QUOTE_EXPIRED',
    });
    expect((await send(t, { quoteId: quote.id, currencyCode: 'USD' })).status).toBe(400);
    const after = await state(t, quote.id);
    expect(after.counts).toEqual(before.counts);
    expect(after.balances).toEqual(before.balances);
    expect(await postingKinds(t, quote.transactionId)).toEqual([]);
    expect(after.events).toEqual([P('PENDING'), P('EXPIRED')]);
  });

  it.each([
    ['less', SENT - 1],
    ['more', SENT + 1],
  ])(
    'money in the wrong amount (%s) fails the payment with FUNDING_AMOUNT_MISMATCH, as real-time funding does: refunded, no balance changed',
    async (_what, paid) => {
      const t = await buildAtStart();
      const { quote } = await pushQuote(t);
      const before = await state(t, quote.id);
      const reply = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: paid });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        status: 'FAILED',
        failureReason: 'FUNDING_AMOUNT_MISMATCH',
        refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
      });
      expect((await quoteOf(t, quote.id)).status).toBe('FAILED');
      const after = await state(t, quote.id);
      // What arrived went back to the payer: every balance is what it was, no transaction was added.
      expect(after.balances).toEqual(before.balances);
      expect(after.counts.transactions).toBe(before.counts.transactions);
      expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'REFUND']);
      expect(after.events).toEqual([P('PENDING'), P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')]);
      // A failed quote cannot be paid again.
      const again = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: SENT });
      expect(again.status).toBe(400);
      expect(again.body.details.errors[0].message).toBe(
        `Quote ${quote.id} failed and cannot be executed; create a new quote`,
      );
      await expectBalancedBooks(t);
    },
  );

  it('a push is no pull: a source ending 002 (a pull that finds no funds) is paid by /sandbox/send', async () => {
    const t = await buildAtStart();
    const { quote } = await pushQuote(t, { sourceSuffix: '002' });
    const pulled = await executeQuote(t, quote.id);
    expect(pulled.status).toBe(400);
    expect(pulled.body).toMatchObject({ code: 'INVALID_AMOUNT', details: { reason: 'INSUFFICIENT_BALANCE' } });
    const pushed = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.body.status).toBe('COMPLETED');
    await expectBalancedBooks(t);
  });

  it('refuses a quote whose source account was deleted since (400 naming source.accountId), moving nothing', async () => {
    const t = await buildAtStart();
    const { quote, bank } = await pushQuote(t);
    expect((await t.api('DELETE', `/platform/external-accounts/${bank.id}`)).status).toBe(204);
    const before = await state(t, quote.id);
    const refused = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      { field: 'source.accountId', message: `names ${bank.id}, which no longer exists` },
    ]);
    expect(await state(t, quote.id)).toEqual(before);
  });

  it('still refuses a quote funded from an internal account: that one is executed', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    expect(quote.paymentInstructions).toBeUndefined();
    const before = await state(t, quote.id);
    const refused = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      {
        field: 'quoteId',
        message: 'names a quote funded from an internal account: execute it with POST /quotes/{quoteId}/execute',
      },
    ]);
    expect(await state(t, quote.id)).toEqual(before);
  });

  it('pays from a bank account of every type, in every currency railyard has a bank account type and a rate for', async () => {
    const t = await buildAtStart();
    const usdc = await platformAccount(t, 'USDC');
    const bankTypes = ACCOUNT_TYPES.filter((def) => def.kind === 'BANK');
    const paid = new Set<string>();
    let credited = 0;
    for (const { accountType } of bankTypes) {
      const bank = await externalAccount(t, accountType);
      // 10 USDC arrive whatever the sending currency.
      const quoted = await createQuote(t, {
        source: { sourceType: 'ACCOUNT', accountId: bank.id },
        destination: { destinationType: 'ACCOUNT', accountId: usdc.id },
        lockedCurrencySide: 'RECEIVING',
        lockedCurrencyAmount: 10_000_000,
      });
      expect(quoted.status, `${accountType}: ${quoted.text}`).toBe(201);
      const quote = quoted.body;
      expect(quote.sendingCurrency.code, accountType).toBe(bank.currency);
      expect(quote.paymentInstructions[0].accountOrWalletInfo.reference, accountType).toMatch(/^RY-/);
      const sent = await send(t, { quoteId: quote.id, currencyCode: bank.currency });
      expect(sent.status, `${accountType}: ${sent.text}`).toBe(200);
      expect(sent.body.status, accountType).toBe('COMPLETED');
      credited += 10_000_000;
      paid.add(bank.currency);
    }
    expect((await platformAccount(t, 'USDC')).balance.amount).toBe(credited);
    // Every currency a bank account type is made for by default was paid in.
    const currencies = new Set(
      bankTypes
        .flatMap((def) => (Array.isArray(def.currencies) ? [def.currencies[0]!] : []))
        .filter((code) => ratedCurrencies().includes(code)),
    );
    expect(currencies.size).toBeGreaterThan(30);
    expect([...currencies].filter((code) => !paid.has(code))).toEqual([]);
    await expectBalancedBooks(t);
  });
});

describe('POST /quotes/{quoteId}/execute of a quote funded from an external bank account', () => {
  it('pulls the funds by default, and the quote can then no longer be pushed', async () => {
    const t = await buildAtStart();
    const { quote } = await pushQuote(t);
    const executed = await executeQuote(t, quote.id, { 'idempotency-key': 'pull-1' });
    expect(executed.status, executed.text).toBe(200);
    expect(executed.body.status).toBe('COMPLETED');
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    const after = await state(t, quote.id);
    const pushed = await send(t, { quoteId: quote.id, currencyCode: 'USD' });
    expect(pushed.status).toBe(400);
    expect(await state(t, quote.id)).toEqual(after);
  });

  it('in strict mode is refused with 400 INVALID_INPUT naming /sandbox/send, moving nothing; /sandbox/send then pays it', async () => {
    const t = await buildAtStart();
    await t.raw('PATCH', '/_railyard/platform', { body: { strictIdentifiers: true } });
    const { quote, bank } = await pushQuote(t);
    const before = await state(t, quote.id);
    for (const headers of [{}, { 'idempotency-key': 'strict-pull' }] as Record<string, string>[]) {
      const refused = await executeQuote(t, quote.id, headers);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
      expect(refused.body.details.errors).toEqual([
        {
          field: 'quoteId',
          message: `names a quote funded from the external account ${bank.id}: its funds must be pushed from that account as the quote's paymentInstructions say, not pulled; in the sandbox, POST /sandbox/send simulates the push (strict identifiers)`,
        },
      ]);
    }
    expect(await state(t, quote.id)).toEqual(before);
    const sent = await send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: SENT });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.status).toBe('COMPLETED');
    // A quote funded from an internal account executes as ever.
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const internal = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    expect((await executeQuote(t, internal.id)).body.status).toBe('COMPLETED');
  });

  it('in strict mode, immediatelyExecute is refused for such a quote (400 naming immediatelyExecute) and nothing is created', async () => {
    const t = await buildAtStart();
    await t.raw('PATCH', '/_railyard/platform', { body: { strictIdentifiers: true } });
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const before = await counts(t);
    const refused = await createQuote(
      t,
      accountQuoteBody(bank.id, destination.id, { amount: SENT, extra: { immediatelyExecute: true } }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      {
        field: 'immediatelyExecute',
        message:
          'cannot be true for a quote funded from an external account: its funds must be pushed from that account, not pulled; create the quote, then simulate the push with POST /sandbox/send (strict identifiers)',
      },
    ]);
    expect(await counts(t)).toEqual(before);
    // Out of strict mode the same request pulls at once.
    await t.raw('PATCH', '/_railyard/platform', { body: { strictIdentifiers: false } });
    const pulled = await createQuote(
      t,
      accountQuoteBody(bank.id, destination.id, { amount: SENT, extra: { immediatelyExecute: true } }),
    );
    expect(pulled.status, pulled.text).toBe(201);
    expect(pulled.body.status).toBe('COMPLETED');
    // Pulled at creation: nothing is left for the customer to send.
    expect(pulled.body.paymentInstructions).toBeUndefined();
  });

  it("in strict mode, an agent's execute of such a quote is refused the same way", async () => {
    const t = await buildAtStart();
    await t.raw('PATCH', '/_railyard/platform', { body: { strictIdentifiers: true } });
    const customer = await createCustomer(t, individualBody('Jordan Rivera'));
    const bank = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('USD_ACCOUNT'), customerId: customer.id },
    });
    const usdc = (await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USDC`)).body
      .data[0];
    const agent = await connectedAgent(t, customer.id);
    const made = await agent.api('POST', '/agents/me/quotes', accountQuoteBody(bank.body.id, usdc.id));
    expect(made.status, made.text).toBe(201);
    const before = await state(t, made.body.id);
    const refused = await agent.api('POST', `/agents/me/quotes/${made.body.id}/execute`);
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      expect.objectContaining({ field: 'quoteId', message: expect.stringContaining('POST /sandbox/send') }),
    ]);
    expect(await state(t, made.body.id)).toEqual(before);
    expect((await send(t, { quoteId: made.body.id, currencyCode: 'USD' })).body.status).toBe('COMPLETED');
  });
});

describe('a customer in an SCA region', () => {
  it('pushes without a challenge (the transfer is made at its own bank); an execute asks for one as for any pull', async () => {
    const t = await buildAtStart();
    const customer = await euCustomer(t);
    await scaLogin(t, customer.id);
    const bank = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('USD_ACCOUNT'), customerId: customer.id },
    });
    const destination = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('EUR_ACCOUNT'), customerId: customer.id },
    });
    const pushed = (await createQuote(t, accountQuoteBody(bank.body.id, destination.body.id))).body;
    expect(pushed.status).toBe('PENDING');
    expect(pushed.paymentInstructions).toHaveLength(1);
    const sent = await send(t, { quoteId: pushed.id, currencyCode: 'USD' });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.status).toBe('COMPLETED');

    const pulled = (await createQuote(t, accountQuoteBody(bank.body.id, destination.body.id))).body;
    const challenged = await executeQuote(t, pulled.id);
    expect(challenged.body.status).toBe('PENDING_AUTHORIZATION');
    // While the challenge is open, the quote is not paid by a push either.
    const refused = await send(t, { quoteId: pulled.id, currencyCode: 'USD' });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors[0].message).toContain('awaits Strong Customer Authentication');
    expect(await postingKinds(t, pulled.transactionId)).toEqual([]);
  });
});

describe('concurrent payments of one quote funded from an external bank account', () => {
  it('6 concurrent sends: one 200, five 400, the money moved once', async () => {
    const t = await buildAtStart();
    const { quote } = await pushQuote(t, { destinationSuffix: '003' });
    const before = await counts(t);
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => send(t, { quoteId: quote.id, currencyCode: 'USD', currencyAmount: SENT })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    expect(replies.find((r) => r.status === 200)!.body.status).toBe('PROCESSING');
    expect((await counts(t)).transactions).toBe(before.transactions);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED']);
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: BigInt(SENT), held: 0n });
    await t.advanceClock(6 * 60);
    expect((await quoteOf(t, quote.id)).status).toBe('COMPLETED');
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PROCESSING'),
      P('COMPLETED'),
    ]);
    await expectBalancedBooks(t);
  });

  it('sends racing executes: one of them pays, the others are refused (400 for a send, 409 for an execute)', async () => {
    const t = await buildAtStart();
    const { quote } = await pushQuote(t);
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? send(t, { quoteId: quote.id, currencyCode: 'USD' }).then((r) => ({ ...r, kind: 'send' }))
          : executeQuote(t, quote.id).then((r) => ({ ...r, kind: 'execute' })),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expect(r.status).toBe(r.kind === 'send' ? 400 : 409);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    expect(await systemAccount(t, 'EXTERNAL_RAILS', 'MXN')).toEqual({
      available: BigInt(quote.totalReceivingAmount),
      held: 0n,
    });
    await expectBalancedBooks(t);
  });
});
