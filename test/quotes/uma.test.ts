// Paying UMA addresses: every sandbox address on both sandbox domains, looked up, quoted with
// the lookup and the sender information it asks for, executed, and played out on the sandbox
// clock; the checks on lookupId and senderCustomerInfo; unknown receivers.

import { describe, expect, it } from 'vitest';
import { SANDBOX_UMA_ADDRESSES, SANDBOX_UMA_DOMAINS } from '../../src/rails/magic.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { balances, eventsOf, expectBalancedBooks, fund, fundedUsd, platformAccount } from '../fixtures/money.js';
import {
  buildAtStart,
  counts,
  createQuote,
  currency,
  executeQuote,
  lookupUma,
  postingKinds,
  quoteOf,
  transactionOf,
} from '../fixtures/quotes.js';
import type { TestApp } from '../helper.js';

const SENDER_INFO = { FULL_NAME: 'Jordan Rivera', NATIONALITY: 'US' };
const P = (type: string) => `OUTGOING_PAYMENT.${type}`;

interface Case {
  name: string;
  receiving: string;
  /** Paid from the platform's account in this currency (never the receiving one). */
  sending: 'USD' | 'USDC';
  atExecute: { status: string; failureReason?: string; refunded?: boolean; events: string[]; postings: string[] };
  /** The payment completes this many seconds after execution. */
  completesAfter?: number;
}

const SUCCESS = {
  status: 'COMPLETED',
  events: [P('PENDING'), P('PROCESSING'), P('COMPLETED')],
  postings: ['HOLD', 'CONVERT', 'PAYOUT'],
};

const CASES: Case[] = [
  { name: 'success.usd', receiving: 'USD', sending: 'USDC', atExecute: SUCCESS },
  { name: 'success.eur', receiving: 'EUR', sending: 'USD', atExecute: SUCCESS },
  { name: 'success.mxn', receiving: 'MXN', sending: 'USD', atExecute: SUCCESS },
  {
    name: 'pending.long.usd',
    receiving: 'USD',
    sending: 'USDC',
    atExecute: { status: 'PROCESSING', events: [P('PENDING'), P('PROCESSING')], postings: ['HOLD'] },
    completesAfter: 3600,
  },
  {
    name: 'fail.compliance.usd',
    receiving: 'USD',
    sending: 'USDC',
    atExecute: {
      status: 'FAILED',
      failureReason: 'COMPLIANCE_REJECTED',
      refunded: true,
      events: [P('PENDING'), P('PROCESSING'), P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')],
      postings: ['HOLD', 'RELEASE'],
    },
  },
];

/** The platform's account of `code`, funded with `amount`. */
async function fundedPlatform(t: TestApp, code: 'USD' | 'USDC', amount: number) {
  if (code === 'USD') return fundedUsd(t, amount);
  const account = await platformAccount(t, code);
  return fund(t, account.id, amount);
}

function umaQuoteBody(
  sourceId: string,
  address: string,
  lookupId: string | undefined,
  extra: Record<string, unknown> = {},
) {
  return {
    ...(lookupId !== undefined ? { lookupId } : {}),
    source: { sourceType: 'ACCOUNT', accountId: sourceId },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: address },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 5_000,
    senderCustomerInfo: SENDER_INFO,
    ...extra,
  };
}

describe('paying a sandbox UMA address', () => {
  it('covers every sandbox address', () => {
    expect(SANDBOX_UMA_ADDRESSES.map((r) => r.name).sort()).toEqual(CASES.map((c) => c.name).sort());
  });

  for (const domain of SANDBOX_UMA_DOMAINS) {
    for (const c of CASES) {
      it(`$${c.name}@${domain}: lookup, quote, execute -> ${c.atExecute.status}${c.completesAfter ? ' then COMPLETED' : ''}`, async () => {
        const t = await buildAtStart();
        const customer = await createCustomer(t, individualBody('Jordan Rivera'));
        const funded = c.sending === 'USD' ? 1_000_000 : 100_000_000;
        const amount = c.sending === 'USD' ? 5_000 : 50_000_000;
        const source = await fundedPlatform(t, c.sending, funded);
        const address = `$${c.name}@${domain}`;
        const lookupId = await lookupUma(t, address, { customerId: customer.id });

        const created = await createQuote(
          t,
          umaQuoteBody(source.id, address, lookupId, { lockedCurrencyAmount: amount }),
        );
        expect(created.status).toBe(201);
        const quote = created.body;
        expect(quote).toMatchObject({
          status: 'PENDING',
          source: { sourceType: 'ACCOUNT', accountId: source.id },
          destination: { destinationType: 'UMA_ADDRESS', umaAddress: address, currency: c.receiving },
          sendingCurrency: currency(c.sending),
          receivingCurrency: currency(c.receiving),
          totalSendingAmount: amount,
        });
        // UMA is an instant rail: the quote lives 5 minutes.
        expect(Date.parse(quote.expiresAt) - Date.parse(quote.createdAt)).toBe(5 * 60 * 1000);

        const executed = await executeQuote(t, quote.id);
        expect(executed.status).toBe(200);
        expect(executed.body.status).toBe(c.atExecute.status);
        const tx = await transactionOf(t, quote.transactionId);
        expect(tx).toMatchObject({
          status: c.atExecute.status,
          destination: { destinationType: 'UMA_ADDRESS', umaAddress: address, currency: c.receiving },
          receivedAmount: { amount: quote.totalReceivingAmount, currency: currency(c.receiving) },
        });
        expect(tx.failureReason).toBe(c.atExecute.failureReason);
        if (c.atExecute.refunded) {
          expect(tx.refund).toMatchObject({ status: 'COMPLETED', reason: 'TRANSACTION_FAILED' });
        } else {
          expect(tx.refund).toBeUndefined();
        }
        expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual(c.atExecute.events);
        expect(await postingKinds(t, quote.transactionId)).toEqual(c.atExecute.postings);
        const debited = c.atExecute.status === 'FAILED' ? 0 : amount;
        const settled = c.atExecute.status === 'COMPLETED' ? amount : 0;
        expect(await balances(t, source.id, c.sending)).toEqual({
          balance: funded - debited,
          totalBalance: funded - settled,
        });
        await expectBalancedBooks(t);

        if (c.completesAfter !== undefined) {
          await t.advanceClock(c.completesAfter - 1);
          expect((await quoteOf(t, quote.id)).status).toBe('PROCESSING');
          await t.advanceClock(1);
          expect((await quoteOf(t, quote.id)).status).toBe('COMPLETED');
          expect((await transactionOf(t, quote.transactionId)).status).toBe('COMPLETED');
          expect((await eventsOf(t, quote.transactionId)).map((e) => e.type)).toEqual([
            P('PENDING'),
            P('PROCESSING'),
            P('COMPLETED'),
          ]);
          expect(await postingKinds(t, quote.transactionId)).toEqual(['HOLD', 'CONVERT', 'PAYOUT']);
          expect(await balances(t, source.id, c.sending)).toEqual({
            balance: funded - amount,
            totalBalance: funded - amount,
          });
          await expectBalancedBooks(t);
        }
      });
    }
  }

  it('refuses to pay $success.usd from USD: same currency, use transfer-out', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t);
    const address = '$success.usd@sandbox.uma.money';
    const lookupId = await lookupUma(t, address, {});
    const reply = await createQuote(t, umaQuoteBody(source.id, address, lookupId));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      status: 400,
      code: 'INVALID_CURRENCY',
      message: expect.stringContaining('transfer-out'),
    });
    expect(await counts(t)).toMatchObject({ quotes: 0, transactions: 0 });
  });

  it('answers 404 UMA_NOT_FOUND at lookup for an unknown sandbox name, on both domains', async () => {
    const t = await buildAtStart();
    for (const domain of SANDBOX_UMA_DOMAINS) {
      const reply = await t.api(
        'GET',
        `/receiver/uma/${encodeURIComponent(`$non.existent.usd@${domain}`)}?senderUmaAddress=${encodeURIComponent('$alex@railyard.sandbox.uma.money')}`,
      );
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'UMA_NOT_FOUND' });
    }
  });

  it('requires a lookupId to pay a UMA address (400 naming lookupId), and writes nothing', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t);
    const reply = await createQuote(t, umaQuoteBody(source.id, '$success.eur@sandbox.uma.money', undefined));
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'lookupId' })]);
    expect(await counts(t)).toMatchObject({ quotes: 0, transactions: 0 });
    expect(await balances(t, source.id)).toEqual({ balance: 1_000_000, totalBalance: 1_000_000 });
  });

  it('requires the mandatory FULL_NAME the lookup asked for; NATIONALITY is optional', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t);
    const address = '$success.eur@sandbox.grid.uma.money';
    const lookupId = await lookupUma(t, address, {});
    for (const info of [undefined, {}, { NATIONALITY: 'US' }, { FULL_NAME: '' }]) {
      const body = umaQuoteBody(source.id, address, lookupId, { senderCustomerInfo: info });
      if (info === undefined) delete (body as Record<string, unknown>).senderCustomerInfo;
      const reply = await createQuote(t, body);
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('INVALID_INPUT');
      expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'senderCustomerInfo.FULL_NAME' })]);
    }
    expect(await counts(t)).toMatchObject({ quotes: 0, transactions: 0 });
    const ok = await createQuote(
      t,
      umaQuoteBody(source.id, address, lookupId, { senderCustomerInfo: { FULL_NAME: 'Jordan Rivera' } }),
    );
    expect(ok.status).toBe(201);
    expect(ok.body.status).toBe('PENDING');
  });

  it("refuses a lookup made for another address, an unknown lookup, and another platform's lookup", async () => {
    const t = await buildAtStart();
    const other = await t.newPlatform();
    const source = await fundedUsd(t);
    const eurLookup = await lookupUma(t, '$success.eur@sandbox.uma.money', {});
    const theirs = await lookupUma(other, '$success.mxn@sandbox.uma.money', {});
    for (const [address, lookupId] of [
      ['$success.mxn@sandbox.uma.money', eurLookup],
      ['$success.mxn@sandbox.uma.money', 'Lookup:0193f1d2-0000-7000-8000-000000000000'],
      ['$success.mxn@sandbox.uma.money', theirs],
    ] as const) {
      const reply = await createQuote(t, umaQuoteBody(source.id, address, lookupId));
      expect(reply.status).toBe(400);
      expect(reply.body.details.errors).toEqual([expect.objectContaining({ field: 'lookupId' })]);
    }
    expect(await counts(t)).toMatchObject({ quotes: 0, transactions: 0 });
  });

  it('refuses a destination currency the receiver does not take', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t);
    const address = '$success.eur@sandbox.uma.money';
    const lookupId = await lookupUma(t, address, {});
    const reply = await createQuote(t, {
      ...umaQuoteBody(source.id, address, lookupId),
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: address, currency: 'MXN' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      code: 'INVALID_CURRENCY',
      details: { errors: [{ field: 'destination.currency' }] },
    });
  });
});
