// Event coverage: one platform with a webhook receiver goes through every area that records
// events (onboarding, verifications, external-account ownership, funding, transfers in and
// out with failures and a refund, cross-currency quotes paid, failed, expired and awaiting
// SCA, bulk import). The receiver must get each event once, signed,
// and valid against the reference's payload schema of its type.

import { afterEach, describe, expect, it } from 'vitest';
import { businessBody, createCustomer, individualBody, multipart } from '../fixtures/customers.js';
import { externalAccount, fundedUsd, transferIn, transferOut } from '../fixtures/money.js';
import { build } from '../helper.js';
import { activateWallet, deliveries, expectAllConform, receiverFor, type Receiver } from './support.js';

const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

describe('webhooks of every area that exists', () => {
  it('are delivered once each, signed, and valid against the reference', { timeout: 60_000 }, async () => {
    const t = await build({ counterpartyRules: true });
    const receiver = await receiverFor(t);
    open.push(receiver);

    // Onboarding: each KYC outcome at creation, a KYB decision, a verification needing more.
    await createCustomer(t, individualBody('Avery Quinn'));
    await createCustomer(t, individualBody('Blake Quinn 001'));
    await createCustomer(t, individualBody('Casey Quinn 002'));
    const business = await createCustomer(t, businessBody('REG-4455-000'));
    expect((await t.api('POST', '/verifications', { body: { customerId: business.id } })).body.verificationStatus).toBe(
      'APPROVED',
    );
    const incomplete = await createCustomer(t, { customerType: 'INDIVIDUAL', fullName: 'Drew Quinn 003' });
    expect(
      (await t.api('POST', '/verifications', { body: { customerId: incomplete.id } })).body.verificationStatus,
    ).toBe('RESOLVE_ERRORS');

    // An external account whose ownership is proven.
    await activateWallet(t);

    // Money: funding, a paid and a rejected transfer-out, a pull, a cancelled pending one
    // (refunded), and one that fails when its 30 s are up.
    const usd = await fundedUsd(t, 100_000);
    const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
    const rejecting = await externalAccount(t, 'USD_ACCOUNT', '004');
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    expect((await transferOut(t, usd.id, bank.id, 1_000)).body.status).toBe('COMPLETED');
    expect((await transferOut(t, usd.id, rejecting.id, 1_000)).body.status).toBe('FAILED');
    expect((await transferIn(t, bank.id, usd.id, 500)).body.status).toBe('COMPLETED');
    expect((await transferIn(t, rejecting.id, usd.id, 500)).body.status).toBe('FAILED');
    const cancelled = await transferOut(t, usd.id, slow.id, 2_000);
    expect(
      (await t.api('POST', `/transactions/${cancelled.body.id}/cancel`, { body: { reason: 'sent twice' } })).status,
    ).toBe(200);
    await transferOut(t, usd.id, slow.id, 3_000);

    // Cross-currency quotes: one paid at once, one whose payout and refund both fail (007),
    // one left to expire, and a real-time-funded one of an EU customer awaiting SCA.
    const mxn = await externalAccount(t, 'MXN_ACCOUNT', '000');
    const mxnFailing = await externalAccount(t, 'MXN_ACCOUNT', '007');
    const quote = (destination: string, immediatelyExecute: boolean) =>
      t.api('POST', '/quotes', {
        body: {
          source: { sourceType: 'ACCOUNT', accountId: usd.id },
          destination: { destinationType: 'ACCOUNT', accountId: destination },
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: 5_000,
          immediatelyExecute,
        },
      });
    expect((await quote(mxn.id, true)).body.status).toBe('COMPLETED');
    expect((await quote(mxnFailing.id, true)).body.status).toBe('FAILED');
    expect((await quote(mxn.id, false)).body.status).toBe('PENDING');
    const eu = await createCustomer(
      t,
      individualBody('Lena Vogel', {
        address: { line1: 'Friedrichstraße 43', city: 'Berlin', postalCode: '10117', country: 'DE' },
        nationality: 'DE',
        phoneNumber: '+4915123456789',
      }),
    );
    const sca = await t.api('POST', '/quotes', {
      body: {
        source: { sourceType: 'REALTIME_FUNDING', customerId: eu.id, currency: 'USD' },
        destination: { destinationType: 'ACCOUNT', accountId: mxn.id },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 5_000,
      },
    });
    expect(sca.status).toBe(202);
    // Past the 30 s of the slow transfer and the 15 minutes of the unexecuted quotes.
    await t.advanceClock(15 * 60);

    // Bulk import: one file that works, one that cannot be read.
    const csv =
      'umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country\n' +
      'emery@pay.example.com,cov-1,INDIVIDUAL,Emery Quinn,1991-05-06,9 Elm St,Austin,TX,78701,US\n';
    await t.api(
      'POST',
      '/customers/bulk/csv',
      multipart({}, [{ fileName: 'ok.csv', data: Buffer.from(csv), contentType: 'text/csv' }]),
    );
    // A file the job cannot read (no header row) fails the job.
    await t.api(
      'POST',
      '/customers/bulk/csv',
      multipart({}, [{ fileName: 'empty.csv', data: Buffer.from(''), contentType: 'text/csv' }]),
    );
    await t.runDueJobs();

    const logged = await deliveries(t, '?limit=100');
    const events = logged.filter((d) => d.type !== 'TEST');
    await receiver.waitFor(events.length + 1);
    await t.runDueJobs();

    expectAllConform(receiver);
    const received = receiver.hits.filter((h) => h.type !== 'TEST');
    // Each event once: as many requests as events, every delivery delivered.
    expect(new Set(received.map((h) => h.id)).size).toBe(received.length);
    expect(received.map((h) => h.id).sort()).toEqual(events.map((d) => d.id).sort());
    expect(new Set((await deliveries(t, '?limit=100')).map((d) => d.status))).toEqual(new Set(['DELIVERED']));

    expect([...new Set(received.map((h) => h.type))].sort()).toEqual([
      'BULK_UPLOAD.COMPLETED',
      'BULK_UPLOAD.FAILED',
      'CUSTOMER.KYB_APPROVED',
      'CUSTOMER.KYC_APPROVED',
      'CUSTOMER.KYC_PENDING',
      'CUSTOMER.KYC_REJECTED',
      'EXTERNAL_ACCOUNT.STATUS_UPDATED',
      'INCOMING_PAYMENT.COMPLETED',
      'INCOMING_PAYMENT.FAILED',
      'INCOMING_PAYMENT.PENDING',
      'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      'OUTGOING_PAYMENT.COMPLETED',
      'OUTGOING_PAYMENT.EXPIRED',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PENDING_AUTHORIZATION',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
      'OUTGOING_PAYMENT.REFUND_FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'VERIFICATION.APPROVED',
      'VERIFICATION.RESOLVE_ERRORS',
    ]);
  });
});
