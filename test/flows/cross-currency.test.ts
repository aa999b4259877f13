// A cross-currency payout as a platform drives it: onboard a customer, fund its USD account,
// register its MXN bank account, look the receiver up, quote USD -> MXN, execute, let the
// payment settle on the sandbox clock, and check the signed webhooks a real HTTP receiver got.

import { afterEach, describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { individualBody } from '../fixtures/customers.js';
import { deliveries, expectAllConform, receiverFor, type Receiver } from '../events/support.js';
import { expectBalancedBooks } from '../fixtures/money.js';
import { buildAtStart, convertedFloor, currency, feesOf, postingKinds, START } from '../fixtures/quotes.js';

const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

describe('a cross-currency payout, end to end', () => {
  it('onboard, fund, quote USD -> MXN, execute, settle; every webhook signed, conforming, once, in order', {
    timeout: 60_000,
  }, async () => {
    const t = await buildAtStart();
    const receiver = await receiverFor(t);
    open.push(receiver);

    // Onboard: an individual approved at creation, with its internal accounts provisioned.
    const created = await t.api('POST', '/customers', {
      body: individualBody('Jordan Rivera', { platformCustomerId: 'crm-fx-0001' }),
    });
    expect(created.status).toBe(201);
    const customer = created.body;
    expect(customer.kycStatus).toBe('APPROVED');
    const accounts = await t.api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`,
    );
    expect(accounts.body.data).toHaveLength(1);
    const usd = accounts.body.data[0];

    // Fund the USD account.
    const funded = await t.api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { body: { amount: 250_000 } });
    expect(funded.status).toBe(200);
    expect(funded.body.balance.amount).toBe(250_000);

    // The customer's MXN bank account (CLABE ending 003: the payout settles after about 6 minutes).
    const bank = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('MXN_ACCOUNT', '003'), customerId: customer.id },
    });
    expect(bank.status).toBe(201);
    expect(bank.body.status).toBe('ACTIVE');

    // Look the receiver up, then quote with the lookup.
    const lookup = await t.api(
      'GET',
      `/receiver/external-account/${bank.body.id}?customerId=${encodeURIComponent(customer.id)}`,
    );
    expect(lookup.status).toBe(200);
    expect(lookup.body.supportedCurrencies[0].currency).toEqual(currency('MXN'));
    const quoted = await t.api('POST', '/quotes', {
      headers: { 'idempotency-key': 'fx-flow-quote-1' },
      body: {
        lookupId: lookup.body.lookupId,
        source: { sourceType: 'ACCOUNT', accountId: usd.id, customerId: customer.id },
        destination: { destinationType: 'ACCOUNT', accountId: bank.body.id, paymentRail: 'SPEI' },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 200_000,
        description: 'Rent June 2025',
        remittanceInformation: 'RENT-2025-06',
        purposeOfPayment: 'FAMILY_SUPPORT',
      },
    });
    expect(quoted.status).toBe(201);
    const quote = quoted.body;
    const fees = feesOf('USD', 200_000n, START);
    expect(quote).toMatchObject({
      status: 'PENDING',
      sendingCurrency: currency('USD'),
      receivingCurrency: currency('MXN'),
      totalSendingAmount: 200_000,
      feesIncluded: Number(fees.all),
      totalReceivingAmount: Number(convertedFloor(200_000n - fees.all, quote.exchangeRate, 'USD', 'MXN')),
    });

    // Execute: the funds are held while the payout is under way.
    const executed = await t.api('POST', `/quotes/${quote.id}/execute`, {
      headers: { 'idempotency-key': 'fx-flow-exec-1' },
    });
    expect(executed.status).toBe(200);
    expect(executed.body.status).toBe('PROCESSING');
    const held = (
      await t.api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`)
    ).body.data[0];
    expect([held.balance.amount, held.totalBalance.amount]).toEqual([50_000, 250_000]);

    // Settle.
    await t.advanceClock(6 * 60);
    const settled = await t.api('GET', `/quotes/${quote.id}`);
    expect(settled.body.status).toBe('COMPLETED');
    const tx = (await t.api('GET', `/transactions/${quote.transactionId}`)).body;
    expect(tx).toMatchObject({
      status: 'COMPLETED',
      customerId: customer.id,
      platformCustomerId: 'crm-fx-0001',
      quoteId: quote.id,
      sentAmount: { amount: 200_000 },
      receivedAmount: { amount: quote.totalReceivingAmount },
      paymentRail: 'SPEI',
      railSelectionMode: 'MANUAL',
      description: 'Rent June 2025',
    });
    const after = (
      await t.api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`)
    ).body.data[0];
    expect([after.balance.amount, after.totalBalance.amount]).toEqual([50_000, 50_000]);
    expect(await postingKinds(t, tx.id)).toEqual(['HOLD', 'CONVERT', 'PAYOUT']);
    await expectBalancedBooks(t);

    // The webhooks: every recorded event delivered once, signed and valid against the reference.
    await t.runDueJobs();
    const events = (await deliveries(t, '?limit=100')).filter((d) => d.type !== 'TEST');
    await receiver.waitFor(events.length + 1);
    expectAllConform(receiver);
    const received = receiver.hits.filter((h) => h.type !== 'TEST');
    expect(received.map((h) => h.id).sort()).toEqual(events.map((d) => d.id).sort());
    expect(new Set(received.map((h) => h.id)).size).toBe(received.length);

    const payment = received.filter((h) => h.type.startsWith('OUTGOING_PAYMENT.'));
    expect(payment.map((h) => [h.type, h.json.data.status])).toEqual([
      ['OUTGOING_PAYMENT.PENDING', 'PENDING'],
      ['OUTGOING_PAYMENT.PROCESSING', 'PROCESSING'],
      ['OUTGOING_PAYMENT.COMPLETED', 'COMPLETED'],
    ]);
    for (const hit of payment) {
      expect(hit.signatureValid).toBe(true);
      expect(hit.json.data).toMatchObject({
        id: tx.id,
        quoteId: quote.id,
        customerId: customer.id,
        sentAmount: { amount: 200_000 },
      });
    }
    expect(payment.at(-1)!.json.data).toEqual(tx);

    // The customer's account told its balance at each step: funded, held, settled.
    const balancesSeen = received
      .filter((h) => h.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && h.json.data.id === usd.id)
      .map((h) => [h.json.data.balance.amount, h.json.data.totalBalance.amount]);
    expect(balancesSeen).toEqual([
      [250_000, 250_000],
      [50_000, 250_000],
      [50_000, 50_000],
    ]);
    expect(received.some((h) => h.type === 'CUSTOMER.KYC_APPROVED' && h.json.data.id === customer.id)).toBe(true);
  });
});
