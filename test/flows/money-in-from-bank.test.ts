// Money in from a customer's linked bank account, as an embedded-wallet app written against
// the hosted sandbox adds it: a quote whose source is the customer's external bank account,
// paid by the customer's own transfer from that account, which POST /sandbox/send simulates.
// The quote then runs the payment lifecycle every quote runs: its transaction, the ledger's
// movements, the events and the signed webhooks. Two flows: USD from the bank into the
// customer's embedded wallet (USDB), then spent from the wallet with a signed withdrawal; and
// EUR from the bank into the customer's USD account.

import { afterEach, describe, expect, it } from 'vitest';
import { deliveries, expectAllConform, type Receiver, receiverFor } from '../events/support.js';
import { accountBody } from '../fixtures/accounts.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { expectBalancedBooks } from '../fixtures/money.js';
import { buildAtStart, postingKinds, systemAccount } from '../fixtures/quotes.js';
import { customerWallet, loginToCustomerWallet } from '../fixtures/wallet.js';
import type { Tenant, TestApp } from '../helper.js';

const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

const P = (type: string) => `OUTGOING_PAYMENT.${type}`;

/** The one internal account of a customer matching `query`. */
async function customerAccount(t: Tenant, customerId: string, query: string): Promise<any> {
  const reply = await t.api(
    'GET',
    `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&${query}`,
  );
  expect(reply.status).toBe(200);
  expect(reply.body.data).toHaveLength(1);
  return reply.body.data[0];
}

/** A bank account of the customer's own, as the app links it. */
async function linkBank(t: Tenant, customerId: string, accountType: string): Promise<any> {
  const reply = await t.api('POST', '/customers/external-accounts', {
    body: { ...accountBody(accountType), customerId },
  });
  expect(reply.status, reply.text).toBe(201);
  expect(reply.body.status).toBe('ACTIVE');
  return reply.body;
}

/** The events of one resource, oldest first, from GET /_railyard/events. */
async function eventTypes(t: Tenant, resourceId: string): Promise<string[]> {
  const reply = await t.raw('GET', `/_railyard/events?resourceId=${encodeURIComponent(resourceId)}&limit=100`);
  expect(reply.status).toBe(200);
  return reply.body.data.map((e: any) => e.type).reverse();
}

/** Every webhook recorded so far reached the receiver once, signed and conforming; answers what it got. */
async function deliveredWebhooks(t: TestApp, receiver: Receiver) {
  await t.runDueJobs();
  const recorded = (await deliveries(t, '?limit=100')).filter((d) => d.type !== 'TEST');
  await receiver.waitFor(recorded.length + 1);
  expectAllConform(receiver);
  const received = receiver.hits.filter((h) => h.type !== 'TEST');
  expect(received.map((h) => h.id).sort()).toEqual(recorded.map((d) => d.id).sort());
  return received;
}

describe('money in from a linked bank account, paid with POST /sandbox/send', () => {
  it("USD from the customer's bank into its embedded wallet; the wallet then spends it with a signed withdrawal", {
    timeout: 60_000,
  }, async () => {
    const t = await buildAtStart();
    const receiver = await receiverFor(t);
    open.push(receiver);

    // The app's customer: signed up with an email (its wallet has an EMAIL_OTP credential).
    const wallet = await customerWallet(t);
    const bank = await linkBank(t, wallet.customerId, 'USD_ACCOUNT');

    // "Add money": a quote from the linked bank account to the wallet.
    const quoted = await t.api('POST', '/quotes', {
      headers: { 'idempotency-key': 'add-money-quote-1' },
      body: {
        source: { sourceType: 'ACCOUNT', accountId: bank.id, customerId: wallet.customerId },
        destination: { destinationType: 'ACCOUNT', accountId: wallet.accountId },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1000,
        description: 'Add money from Chase checking',
      },
    });
    expect(quoted.status, quoted.text).toBe(201);
    const quote = quoted.body;
    expect(quote).toMatchObject({
      status: 'PENDING',
      source: { sourceType: 'ACCOUNT', accountId: bank.id, customerId: wallet.customerId },
      destination: { destinationType: 'ACCOUNT', accountId: wallet.accountId },
      sendingCurrency: { code: 'USD' },
      receivingCurrency: { code: 'USDB' },
      totalSendingAmount: 1000,
    });
    expect(quote.totalReceivingAmount).toBeGreaterThan(0);
    // Where the customer pushes the money from the bank, and how the sandbox stands in for that.
    expect(quote.paymentInstructions).toEqual([
      {
        instructionsNotes: expect.stringMatching(
          new RegExp(`^Sandbox coordinates: send exactly 1000 .*from ${bank.id}.*POST /sandbox/send`),
        ),
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
    const walletBefore = await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET');
    expect(walletBefore.balance.amount).toBe(0);

    // The app's call, with its body as the hosted sandbox takes it.
    const sent = await t.api('POST', '/sandbox/send', {
      body: { quoteId: quote.id, currencyCode: 'USD', currencyAmount: 1000 },
    });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({
      id: quote.transactionId,
      type: 'OUTGOING',
      status: 'COMPLETED',
      quoteId: quote.id,
      customerId: wallet.customerId,
      source: { sourceType: 'ACCOUNT', accountId: bank.id, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: wallet.accountId, currency: 'USDB' },
      sentAmount: { amount: 1000, currency: { code: 'USD' } },
      receivedAmount: { amount: quote.totalReceivingAmount, currency: { code: 'USDB' } },
      description: 'Add money from Chase checking',
    });
    const transaction = (await t.api('GET', `/transactions/${quote.transactionId}`)).body;
    expect(sent.body).toEqual(transaction);
    expect((await t.api('GET', `/quotes/${quote.id}`)).body.status).toBe('COMPLETED');

    // The ledger: the money arrived from outside, was converted and credited to the wallet.
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    const walletAfter = await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET');
    expect([walletAfter.balance.amount, walletAfter.totalBalance.amount]).toEqual([
      quote.totalReceivingAmount,
      quote.totalReceivingAmount,
    ]);
    expect(await systemAccount(t, 'SUSPENSE', 'USD')).toEqual({ available: 0n, held: 0n });
    expect(await systemAccount(t, 'FEES', 'USD')).toEqual({ available: BigInt(quote.feesIncluded), held: 0n });
    await expectBalancedBooks(t);

    // The events, as a test asks railyard for them.
    expect(await eventTypes(t, quote.transactionId)).toEqual([P('PENDING'), P('PROCESSING'), P('COMPLETED')]);
    const balanceEvent = await t.raw(
      'GET',
      `/_railyard/events?type=INTERNAL_ACCOUNT.BALANCE_UPDATED&resourceId=${encodeURIComponent(wallet.accountId)}`,
    );
    expect(balanceEvent.body.data.map((e: any) => e.data.balance.amount)).toEqual([quote.totalReceivingAmount]);

    // The webhooks, as the app's endpoint gets them: signed, conforming, once each, in order.
    const received = await deliveredWebhooks(t, receiver);
    const payment = received.filter((h) => h.type.startsWith('OUTGOING_PAYMENT.'));
    expect(payment.map((h) => [h.type, h.json.data.status])).toEqual([
      [P('PENDING'), 'PENDING'],
      [P('PROCESSING'), 'PROCESSING'],
      [P('COMPLETED'), 'COMPLETED'],
    ]);
    for (const hit of payment) expect(hit.signatureValid).toBe(true);
    expect(payment.at(-1)!.json.data).toEqual(transaction);
    const walletUpdates = received.filter(
      (h) => h.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && h.json.data.id === wallet.accountId,
    );
    expect(walletUpdates.map((h) => [h.signatureValid, h.json.data.balance.amount])).toEqual([
      [true, quote.totalReceivingAmount],
    ]);

    // The money is the customer's to spend: a withdrawal to a bank abroad, signed with a wallet session.
    const { key } = await loginToCustomerWallet(t, wallet.customerId);
    const payee = await linkBank(t, wallet.customerId, 'MXN_ACCOUNT');
    const withdrawal = await t.api('POST', '/quotes', {
      body: {
        source: { sourceType: 'ACCOUNT', accountId: wallet.accountId },
        destination: { destinationType: 'ACCOUNT', accountId: payee.id },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: quote.totalReceivingAmount,
      },
    });
    expect(withdrawal.status, withdrawal.text).toBe(201);
    const payload = withdrawal.body.paymentInstructions[0].accountOrWalletInfo.payloadToSign;
    const executed = await t.api('POST', `/quotes/${withdrawal.body.id}/execute`, {
      headers: { 'Grid-Wallet-Signature': await key.stamp(payload) },
    });
    expect(executed.status, executed.text).toBe(200);
    expect(executed.body.status).toBe('COMPLETED');
    expect((await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET')).balance.amount).toBe(0);
    await expectBalancedBooks(t);
  });

  it("EUR from the customer's bank into its USD account", { timeout: 60_000 }, async () => {
    const t = await buildAtStart();
    const receiver = await receiverFor(t);
    open.push(receiver);
    const customer = await createCustomer(t, individualBody('Anna Müller'));
    const bank = await linkBank(t, customer.id, 'EUR_ACCOUNT');
    const usd = await customerAccount(t, customer.id, 'currency=USD');
    expect(usd.type).toBe('INTERNAL_FIAT');

    // The receiving side locked: exactly 250.00 USD arrive.
    const quoted = await t.api('POST', '/quotes', {
      body: {
        source: { sourceType: 'ACCOUNT', accountId: bank.id },
        destination: { destinationType: 'ACCOUNT', accountId: usd.id },
        lockedCurrencySide: 'RECEIVING',
        lockedCurrencyAmount: 25_000,
      },
    });
    expect(quoted.status, quoted.text).toBe(201);
    const quote = quoted.body;
    expect(quote).toMatchObject({
      sendingCurrency: { code: 'EUR' },
      receivingCurrency: { code: 'USD' },
      totalReceivingAmount: 25_000,
    });
    expect(quote.paymentInstructions[0].accountOrWalletInfo).toMatchObject({
      accountType: 'EUR_ACCOUNT',
      iban: expect.stringMatching(/^DE\d{20}$/),
      paymentRails: ['SEPA', 'SEPA_INSTANT'],
    });

    // currencyAmount left out: the quote's own amount arrives.
    const sent = await t.api('POST', '/sandbox/send', { body: { quoteId: quote.id, currencyCode: 'EUR' } });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toMatchObject({
      id: quote.transactionId,
      status: 'COMPLETED',
      customerId: customer.id,
      source: { sourceType: 'ACCOUNT', accountId: bank.id, currency: 'EUR' },
      destination: { destinationType: 'ACCOUNT', accountId: usd.id, currency: 'USD' },
      sentAmount: { amount: quote.totalSendingAmount, currency: { code: 'EUR' } },
      receivedAmount: { amount: 25_000, currency: { code: 'USD' } },
    });
    const after = await customerAccount(t, customer.id, 'currency=USD');
    expect([after.balance.amount, after.totalBalance.amount]).toEqual([25_000, 25_000]);
    expect(await postingKinds(t, quote.transactionId)).toEqual(['FUNDING_RECEIVED', 'CONVERT', 'PAYOUT']);
    expect(await systemAccount(t, 'SUSPENSE', 'EUR')).toEqual({ available: 0n, held: 0n });
    await expectBalancedBooks(t);

    expect(await eventTypes(t, quote.transactionId)).toEqual([P('PENDING'), P('PROCESSING'), P('COMPLETED')]);
    const received = await deliveredWebhooks(t, receiver);
    const completed = received.filter((h) => h.type === P('COMPLETED'));
    expect(completed).toHaveLength(1);
    expect(completed[0]!.signatureValid).toBe(true);
    expect(completed[0]!.json.data).toEqual((await t.api('GET', `/transactions/${quote.transactionId}`)).body);
    expect(
      received
        .filter((h) => h.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && h.json.data.id === usd.id)
        .map((h) => h.json.data.balance.amount),
    ).toEqual([25_000]);
  });
});
