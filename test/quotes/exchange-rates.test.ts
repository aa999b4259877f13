// GET /exchange-rates: the filters (sourceCurrency, repeated destinationCurrency,
// sendingAmount with its default of 10000), unknown currencies, the platform's fee, the
// 5-minute rate window, and agreement with the quote the same corridor gets.

import { describe, expect, it } from 'vitest';
import { customerRate, decimalToNumber, RATE_WINDOW_MS } from '../../src/rates/index.js';
import { externalAccount, fundedUsd } from '../fixtures/money.js';
import {
  accountQuoteBody,
  buildAtStart,
  convertedFloor,
  createQuote,
  currency,
  feesOf,
  START,
  START_MS,
} from '../fixtures/quotes.js';

describe('GET /exchange-rates', () => {
  it('answers each asked corridor from USD with the default sending amount of 10000', async () => {
    const t = await buildAtStart();
    const reply = await t.api(
      'GET',
      '/exchange-rates?sourceCurrency=USD&destinationCurrency=MXN&destinationCurrency=EUR',
    );
    expect(reply.status).toBe(200);
    const expected = (to: string, rail: string) => {
      const rate = decimalToNumber(customerRate('USD', to, START));
      const fees = feesOf('USD', 10_000n, START);
      return {
        sourceCurrency: currency('USD'),
        sendingAmount: 10_000,
        minSendingAmount: expect.any(Number),
        maxSendingAmount: 100_000_000,
        destinationCurrency: currency(to),
        destinationPaymentRail: rail,
        receivingAmount: Number(convertedFloor(10_000n - fees.all, rate, 'USD', to)),
        exchangeRate: rate,
        fees: { fixed: 10, total: Number(fees.all) },
        updatedAt: START.toISOString(),
      };
    };
    expect(reply.body).toEqual({ data: [expected('MXN', 'SPEI'), expected('EUR', 'SEPA')] });
    // Grid's fixed fee is 10 cents and 0.3% rounds up to 1 cent: 12 cents leave 1 to convert,
    // enough for 1 MXN centavo (a cent is about 17 of them) but not for 1 euro cent (2 are).
    expect(reply.body.data.map((e: any) => e.minSendingAmount)).toEqual([12, 13]);
  });

  it('advertises as minSendingAmount exactly the smallest amount a quote accepts', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 1_000_000);
    for (const [to, type] of [
      ['EUR', 'EUR_ACCOUNT'],
      ['MXN', 'MXN_ACCOUNT'],
      ['VND', 'VND_ACCOUNT'],
    ] as const) {
      const entry = (await t.api('GET', `/exchange-rates?sourceCurrency=USD&destinationCurrency=${to}`)).body.data[0];
      const destination = await externalAccount(t, type);
      const at = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: entry.minSendingAmount }));
      expect(at.status).toBe(201);
      expect(at.body.totalReceivingAmount).toBeGreaterThanOrEqual(1);
      const below = await createQuote(
        t,
        accountQuoteBody(source.id, destination.id, { amount: entry.minSendingAmount - 1 }),
      );
      expect(below.status).toBe(400);
      expect(below.body.code).toBe('AMOUNT_OUT_OF_RANGE');
    }
  });

  it('uses the given sendingAmount', async () => {
    const t = await buildAtStart();
    const reply = await t.api('GET', '/exchange-rates?sourceCurrency=USD&destinationCurrency=INR&sendingAmount=250000');
    expect(reply.status).toBe(200);
    expect(reply.body.data).toHaveLength(1);
    const entry = reply.body.data[0];
    const fees = feesOf('USD', 250_000n, START);
    expect(entry).toMatchObject({ sendingAmount: 250_000, fees: { fixed: 10, total: Number(fees.all) } });
    expect(entry.receivingAmount).toBe(Number(convertedFloor(250_000n - fees.all, entry.exchangeRate, 'USD', 'INR')));
  });

  it('agrees with the quote of the same corridor and amount', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const rate = (await t.api('GET', '/exchange-rates?sourceCurrency=USD&destinationCurrency=MXN&sendingAmount=54321'))
      .body.data[0];
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 54_321 }))).body;
    expect([quote.exchangeRate, quote.totalReceivingAmount, quote.feesIncluded]).toEqual([
      rate.exchangeRate,
      rate.receivingAmount,
      rate.fees.total,
    ]);
  });

  it('charges an amount too small to quote its whole fee, variable part included', async () => {
    const t = await buildAtStart();
    const small = (await t.api('GET', '/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR&sendingAmount=5'))
      .body.data[0];
    // 10 cents fixed, and 0.3% of 5 cents rounded up to 1: more than the amount, so nothing is received.
    expect(small).toMatchObject({
      sendingAmount: 5,
      receivingAmount: 0,
      fees: { fixed: 10, total: Number(feesOf('USD', 5n, START).all) },
    });
    expect(small.fees.total).toBe(11);
  });

  it("without filters, lists every corridor from each of the platform's currencies, never to itself", async () => {
    const t = await buildAtStart();
    const reply = await t.api('GET', '/exchange-rates');
    expect(reply.status).toBe(200);
    const sources = new Set(reply.body.data.map((e: any) => e.sourceCurrency.code));
    expect(sources).toEqual(new Set(['USD', 'USDC', 'USDB']));
    for (const entry of reply.body.data) expect(entry.destinationCurrency.code).not.toBe(entry.sourceCurrency.code);
    const fromUsd = reply.body.data
      .filter((e: any) => e.sourceCurrency.code === 'USD')
      .map((e: any) => e.destinationCurrency.code);
    for (const code of ['EUR', 'MXN', 'INR', 'GBP', 'BRL', 'VND']) expect(fromUsd).toContain(code);
    expect(new Set(fromUsd).size).toBe(fromUsd.length);
  });

  it('answers 400 naming each unknown currency', async () => {
    const t = await buildAtStart();
    const reply = await t.api(
      'GET',
      '/exchange-rates?sourceCurrency=XYZ&destinationCurrency=MXN&destinationCurrency=QQQ',
    );
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors.map((e: any) => e.field).sort()).toEqual([
      'destinationCurrency[1]',
      'sourceCurrency',
    ]);
    const negative = await t.api('GET', '/exchange-rates?sourceCurrency=USD&sendingAmount=-1');
    expect(negative.status).toBe(400);
    expect(negative.body.details.errors.map((e: any) => e.field)).toEqual(['sendingAmount']);
  });

  it("includes the platform's configured fee in fees.fixed and fees.total", async () => {
    const t = await buildAtStart();
    const patched = await t.api('PATCH', '/config', {
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
    expect(patched.status).toBe(200);
    const entry = (await t.api('GET', '/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR')).body.data[0];
    const fees = feesOf('USD', 10_000n, START, { fixed: 25n, bps: 20n });
    expect(fees.all).toBe(10n + 30n + 25n + 20n);
    expect(entry.fees).toEqual({ fixed: 35, total: Number(fees.all) });
    // 10 + 25 fixed, 0.3% and 0.2% of 37 round up to 1 each: 37 leaves 0 to convert, 38 leaves 1, which is not a euro cent yet.
    expect(entry.minSendingAmount).toBe(39);
    expect(entry.receivingAmount).toBe(Number(convertedFloor(10_000n - fees.all, entry.exchangeRate, 'USD', 'EUR')));
  });

  it('changes at 5-minute boundaries of the sandbox clock only', async () => {
    const t = await buildAtStart();
    const read = async () =>
      (await t.api('GET', '/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR')).body.data[0];
    const first = await read();
    await t.advanceClock(299);
    expect(await read()).toEqual(first);
    await t.advanceClock(1);
    const next = await read();
    expect(next.updatedAt).toBe(new Date(START_MS + RATE_WINDOW_MS).toISOString());
    expect(next.exchangeRate).not.toBe(first.exchangeRate);
    expect(next.exchangeRate).toBe(decimalToNumber(customerRate('USD', 'EUR', new Date(START_MS + RATE_WINDOW_MS))));
  });
});
