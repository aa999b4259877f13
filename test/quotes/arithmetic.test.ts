// The arithmetic of a quote. Unit level (src/rates imported directly): the rounding rule at
// 0, 1 and the 9e15 maximum, rounding directions, rates fixed within a 5-minute window and
// moving across windows, currencies with 0 (JPY, VND) and 8 (BTC) decimals. API level: the
// SENDING and RECEIVING locks, with and without a platform fee (configured or overridden),
// checked against receiving = floor((sending − fees) × exchangeRate × 10^(dR − dS)).

import { describe, expect, it } from 'vitest';
import {
  AMOUNT_MAX,
  bpsOf,
  ConversionOutOfRange,
  convertDown,
  convertReceiving,
  convertSending,
  convertUpInverse,
  customerRate,
  decimalToNumber,
  gridFixedFee,
  midRate,
  RATE_WINDOW_MS,
  toDecimal,
  unitsPerUsd,
  type FeeSchedule,
} from '../../src/rates/index.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { accountBody } from '../fixtures/accounts.js';
import { balances, expectBalancedBooks, externalAccount, fund, fundedUsd } from '../fixtures/money.js';
import {
  accountQuoteBody,
  buildAtStart,
  convertedFloor,
  createQuote,
  executeQuote,
  feesOf,
  START,
  START_MS,
  systemAccount,
  type PlatformFee,
} from '../fixtures/quotes.js';
import type { TestApp } from '../helper.js';

const NO_FEES: FeeSchedule = { gridFixed: 0n, gridBps: 0n, platformFixed: 0n, platformBps: 0n };
const GRID: FeeSchedule = { gridFixed: 10n, gridBps: 30n, platformFixed: 0n, platformBps: 0n };
const at = (ms: number) => new Date(START_MS + ms);

describe('src/rates: rates', () => {
  it('are fixed within a 5-minute window and move across windows', () => {
    for (const [from, to] of [
      ['USD', 'EUR'],
      ['USD', 'MXN'],
      ['EUR', 'JPY'],
      ['USD', 'BTC'],
    ] as const) {
      const seen = new Set<string>();
      for (let w = 0; w < 12; w++) {
        const first = customerRate(from, to, at(w * RATE_WINDOW_MS));
        const last = customerRate(from, to, at((w + 1) * RATE_WINDOW_MS - 1));
        expect(last).toEqual(first);
        expect(customerRate(from, to, at(w * RATE_WINDOW_MS + 123_456))).toEqual(first);
        seen.add(`${first.mantissa}e${first.scale}`);
      }
      expect(seen.size).toBeGreaterThan(1);
    }
  });

  it('are the mid rate less 0.5%, within 0.2% drift of the anchor, to 8 significant digits', () => {
    for (let w = 0; w < 24; w++) {
      const when = at(w * RATE_WINDOW_MS);
      const eur = decimalToNumber(customerRate('USD', 'EUR', when));
      expect(eur).toBeGreaterThanOrEqual(0.92 * 0.998 * 0.995 - 1e-8);
      expect(eur).toBeLessThanOrEqual(0.92 * 1.002 * 0.995 + 1e-8);
      expect(eur).toBeCloseTo(midRate('USD', 'EUR', when) * 0.995, 7);
      expect(customerRate('USD', 'EUR', when).mantissa.toString()).toHaveLength(8);
      // Pegged stablecoins do not drift.
      expect(unitsPerUsd('USDC', when)).toBe(1);
      expect(customerRate('USD', 'USDC', when)).toEqual({ mantissa: 99_500_000n, scale: 8 });
    }
  });

  it('keep 8 significant digits at powers of ten', () => {
    expect(toDecimal(1)).toEqual({ mantissa: 10_000_000n, scale: 7 });
    expect(toDecimal(1000)).toEqual({ mantissa: 10_000_000n, scale: 4 });
    expect(toDecimal(0.001)).toEqual({ mantissa: 10_000_000n, scale: 10 });
    expect(toDecimal(17.132855)).toEqual({ mantissa: 17_132_855n, scale: 6 });
  });
});

describe('src/rates: rounding', () => {
  const mxn = { mantissa: 17_132_855n, scale: 6 }; // 17.132855 MXN per USD
  const eur = { mantissa: 91_540_000n, scale: 8 }; // 0.9154 EUR per USD

  it('converts down at 0, 1 and the maximum', () => {
    expect(convertDown(0n, mxn, 'USD', 'MXN')).toBe(0n);
    expect(convertDown(1n, mxn, 'USD', 'MXN')).toBe(17n); // 17.13 centavos, rounded down
    expect(convertDown(1n, eur, 'USD', 'EUR')).toBe(0n); // 0.9154 cent
    expect(convertDown(AMOUNT_MAX, eur, 'USD', 'EUR')).toBe((AMOUNT_MAX * 91_540_000n) / 100_000_000n);
    expect(convertDown(AMOUNT_MAX, mxn, 'USD', 'MXN')).toBe((AMOUNT_MAX * 17_132_855n) / 1_000_000n);
  });

  it('finds the smallest amount whose conversion reaches a received amount (rounded up)', () => {
    expect(convertUpInverse(0n, mxn, 'USD', 'MXN')).toBe(0n);
    expect(convertUpInverse(1n, mxn, 'USD', 'MXN')).toBe(1n);
    expect(convertUpInverse(17n, mxn, 'USD', 'MXN')).toBe(1n);
    expect(convertUpInverse(18n, mxn, 'USD', 'MXN')).toBe(2n);
    expect(convertUpInverse(1n, eur, 'USD', 'EUR')).toBe(2n);
    for (let received = 1n; received < 3_000n; received += 7n) {
      for (const [rate, to] of [
        [mxn, 'MXN'],
        [eur, 'EUR'],
      ] as const) {
        const sent = convertUpInverse(received, rate, 'USD', to);
        expect(convertDown(sent, rate, 'USD', to)).toBeGreaterThanOrEqual(received);
        expect(convertDown(sent - 1n, rate, 'USD', to)).toBeLessThan(received);
      }
    }
  });

  it('rounds variable fees up, to the smallest unit', () => {
    expect(bpsOf(0n, 30n)).toBe(0n);
    expect(bpsOf(1n, 30n)).toBe(1n);
    expect(bpsOf(10_000n, 30n)).toBe(30n);
    expect(bpsOf(10_001n, 30n)).toBe(31n);
    expect(bpsOf(AMOUNT_MAX, 30n)).toBe(27_000_000_000_000n);
  });

  it('a SENDING conversion takes fees out and rounds the received amount down', () => {
    const c = convertSending('USD', 'MXN', mxn, 10_000n, GRID);
    expect(c).toMatchObject({
      totalSending: 10_000n,
      fees: 40n,
      gridFixedFee: 10n,
      gridVariableFee: 30n,
      platformFees: 0n,
    });
    expect(c.totalReceiving).toBe((9_960n * 17_132_855n) / 1_000_000n);
    const withPlatform = convertSending('USD', 'MXN', mxn, 10_000n, { ...GRID, platformFixed: 25n, platformBps: 20n });
    expect(withPlatform).toMatchObject({ fees: 40n + 25n + 20n, platformFees: 45n });
    expect(withPlatform.totalReceiving).toBe((9_915n * 17_132_855n) / 1_000_000n);
  });

  it('refuses 0, an amount the fees take whole, and amounts past the maximum on either side', () => {
    expect(() => convertSending('USD', 'MXN', mxn, 0n, GRID)).toThrow(ConversionOutOfRange);
    expect(() => convertSending('USD', 'MXN', mxn, 11n, GRID)).toThrow(ConversionOutOfRange);
    expect(convertSending('USD', 'MXN', mxn, 12n, GRID).totalReceiving).toBe(17n);
    // Without fees 1 unit converts; 1 cent to EUR rounds down to nothing and is refused.
    expect(convertSending('USD', 'MXN', mxn, 1n, NO_FEES).totalReceiving).toBe(17n);
    expect(() => convertSending('USD', 'EUR', eur, 1n, NO_FEES)).toThrow(ConversionOutOfRange);
    // The maximum is accepted where the other side stays under it, refused where it would not.
    expect(convertSending('USD', 'EUR', eur, AMOUNT_MAX, GRID).totalSending).toBe(AMOUNT_MAX);
    expect(() => convertSending('USD', 'MXN', mxn, AMOUNT_MAX, GRID)).toThrow(/receiving amount/);
    expect(() => convertSending('USD', 'EUR', eur, AMOUNT_MAX + 1n, GRID)).toThrow(/sending amount/);
    expect(() => convertReceiving('USD', 'EUR', eur, AMOUNT_MAX, GRID)).toThrow(/sending amount/);
    expect(() => convertReceiving('USD', 'MXN', mxn, AMOUNT_MAX + 1n, GRID)).toThrow(/receiving amount/);
    expect(convertReceiving('USD', 'MXN', mxn, AMOUNT_MAX, GRID).totalReceiving).toBe(AMOUNT_MAX);
    expect(() => convertReceiving('USD', 'MXN', mxn, 1n, { ...GRID, platformBps: 9_970n })).toThrow(
      ConversionOutOfRange,
    );
  });

  it('a RECEIVING conversion delivers exactly the locked amount for the smallest sending amount that covers it', () => {
    for (const schedule of [NO_FEES, GRID, { ...GRID, platformFixed: 25n, platformBps: 20n }]) {
      for (const [rate, to] of [
        [mxn, 'MXN'],
        [eur, 'EUR'],
      ] as const) {
        for (let received = 1n; received < 200_000n; received = received * 3n + 1n) {
          const c = convertReceiving('USD', to, rate, received, schedule);
          expect(c.totalReceiving).toBe(received);
          const netOf = (total: bigint) =>
            total -
            schedule.gridFixed -
            schedule.platformFixed -
            bpsOf(total, schedule.gridBps) -
            bpsOf(total, schedule.platformBps);
          expect(c.fees).toBe(c.totalSending - netOf(c.totalSending));
          expect(convertDown(netOf(c.totalSending), rate, 'USD', to)).toBeGreaterThanOrEqual(received);
          const less = c.totalSending - 1n;
          if (netOf(less) > 0n) expect(convertDown(netOf(less), rate, 'USD', to)).toBeLessThan(received);
        }
      }
    }
  });

  it('handles currencies with 0 decimals (JPY, VND) and 8 decimals (BTC)', () => {
    const when = START;
    const jpy = customerRate('USD', 'JPY', when);
    // 1.00 USD (100 cents) buys floor(rate) yen.
    expect(convertDown(100n, jpy, 'USD', 'JPY')).toBe(BigInt(Math.floor(decimalToNumber(jpy))));
    expect(convertDown(1n, jpy, 'USD', 'JPY')).toBe(BigInt(Math.floor(decimalToNumber(jpy) / 100)));
    const vnd = customerRate('JPY', 'VND', when);
    expect(convertDown(1_000n, vnd, 'JPY', 'VND')).toBe(BigInt(Math.floor(1_000 * decimalToNumber(vnd))));
    expect(convertUpInverse(1n, jpy, 'USD', 'JPY')).toBe(1n);
    const btc = customerRate('USD', 'BTC', when);
    // 1.00 USD in satoshis: 100 cents × rate × 10^(8 − 2).
    const sats = convertDown(100n, btc, 'USD', 'BTC');
    expect(sats).toBe(BigInt(Math.floor(Number((decimalToNumber(btc) * 1e8).toPrecision(12)))));
    expect(Number(sats)).toBeGreaterThan(1_400);
    expect(Number(sats)).toBeLessThan(1_600);
    const back = customerRate('BTC', 'USD', when);
    expect(convertDown(1n, back, 'BTC', 'USD')).toBe(0n); // one sat is worth less than a cent
    expect(convertDown(100_000_000n, back, 'BTC', 'USD')).toBe(BigInt(Math.floor(decimalToNumber(back) * 100)));
    // Grid's fixed fee is 0.10 USD at the mid rate, rounded up in the sending currency's smallest unit.
    expect(gridFixedFee('USD', when)).toBe(10n);
    expect(gridFixedFee('JPY', when)).toBe(BigInt(Math.ceil(Number((0.1 * unitsPerUsd('JPY', when)).toPrecision(12)))));
    expect(gridFixedFee('BTC', when)).toBe(
      BigInt(Math.ceil(Number((0.1 * unitsPerUsd('BTC', when) * 1e8).toPrecision(12)))),
    );
    expect(gridFixedFee('USDC', when)).toBe(100_000n);
  });
});

// ----------------------------------------------------------------------------- API level

async function quoted(
  t: TestApp,
  sourceId: string,
  destinationType: string,
  side: 'SENDING' | 'RECEIVING',
  amount: number,
  extra: Record<string, unknown> = {},
) {
  const destination = await externalAccount(t, destinationType);
  const reply = await createQuote(t, accountQuoteBody(sourceId, destination.id, { side, amount, extra }));
  expect(reply.status).toBe(201);
  return reply.body;
}

function expectSendingLock(quote: any, amount: number, platform: PlatformFee = { fixed: 0n, bps: 0n }) {
  const from = quote.sendingCurrency.code;
  const to = quote.receivingCurrency.code;
  const fees = feesOf(from, BigInt(amount), START, platform);
  expect(quote.totalSendingAmount).toBe(amount);
  expect(quote.feesIncluded).toBe(Number(fees.all));
  expect(quote.platformFeesIncluded).toBe(Number(fees.platform));
  expect(quote.totalReceivingAmount).toBe(
    Number(convertedFloor(BigInt(amount) - fees.all, quote.exchangeRate, from, to)),
  );
  expect(quote.exchangeRate).toBe(decimalToNumber(customerRate(from, to, START)));
}

function expectReceivingLock(quote: any, amount: number, platform: PlatformFee = { fixed: 0n, bps: 0n }) {
  const from = quote.sendingCurrency.code;
  const to = quote.receivingCurrency.code;
  const sending = BigInt(quote.totalSendingAmount);
  const fees = feesOf(from, sending, START, platform);
  expect(quote.totalReceivingAmount).toBe(amount);
  expect(quote.feesIncluded).toBe(Number(fees.all));
  expect(quote.platformFeesIncluded).toBe(Number(fees.platform));
  // The sending amount covers it ...
  expect(convertedFloor(sending - fees.all, quote.exchangeRate, from, to)).toBeGreaterThanOrEqual(BigInt(amount));
  // ... and one unit less would not.
  const less = sending - 1n;
  expect(convertedFloor(less - feesOf(from, less, START, platform).all, quote.exchangeRate, from, to)).toBeLessThan(
    BigInt(amount),
  );
}

describe('locked-side arithmetic over the API', () => {
  const corridors = ['MXN_ACCOUNT', 'EUR_ACCOUNT', 'VND_ACCOUNT', 'INR_ACCOUNT', 'LIGHTNING'];
  const extraFor = (type: string) => (type === 'INR_ACCOUNT' ? { purposeOfPayment: 'FAMILY_SUPPORT' } : {});

  it.each(corridors)('SENDING lock without a platform fee, USD to %s', async (type) => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 100_000_000);
    for (const amount of [13, 101, 9_999, 10_000, 1_234_567, 100_000_000]) {
      expectSendingLock(await quoted(t, source.id, type, 'SENDING', amount, extraFor(type)), amount);
    }
  });

  it.each(corridors)('RECEIVING lock without a platform fee, USD to %s', async (type) => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 100_000_000);
    for (const amount of [1, 17, 1_000, 123_457, 5_000_000]) {
      expectReceivingLock(await quoted(t, source.id, type, 'RECEIVING', amount, extraFor(type)), amount);
    }
  });

  it('SENDING and RECEIVING locks with a platform fee configured for USD cross-currency payments', async () => {
    const t = await buildAtStart();
    const config = await t.api('PATCH', '/config', {
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
    expect(config.status).toBe(200);
    const source = await fundedUsd(t, 100_000_000);
    const platform = { fixed: 25n, bps: 20n };
    for (const type of ['MXN_ACCOUNT', 'EUR_ACCOUNT', 'VND_ACCOUNT']) {
      for (const amount of [57, 10_000, 1_234_567]) {
        const sending = await quoted(t, source.id, type, 'SENDING', amount);
        expectSendingLock(sending, amount, platform);
        expect(sending.platformFeesIncluded).toBeGreaterThan(0);
        expect(sending.feesIncluded).toBeGreaterThan(sending.platformFeesIncluded);
        expectReceivingLock(await quoted(t, source.id, type, 'RECEIVING', amount), amount, platform);
      }
    }
    // A request's override replaces the configured fee.
    const override = {
      platformFeeOverride: { platformFixedFee: { amount: 0, currency: 'USD' }, platformVariableFeeBps: 100 },
    };
    expectSendingLock(await quoted(t, source.id, 'MXN_ACCOUNT', 'SENDING', 10_000, override), 10_000, {
      fixed: 0n,
      bps: 100n,
    });
    expectReceivingLock(await quoted(t, source.id, 'MXN_ACCOUNT', 'RECEIVING', 10_000, override), 10_000, {
      fixed: 0n,
      bps: 100n,
    });
    const zero = {
      platformFeeOverride: { platformFixedFee: { amount: 0, currency: 'USD' }, platformVariableFeeBps: 0 },
    };
    expectSendingLock(await quoted(t, source.id, 'MXN_ACCOUNT', 'SENDING', 10_000, zero), 10_000);
  });

  it('a fee configured for another source currency does not apply to USD', async () => {
    const t = await buildAtStart();
    await t.api('PATCH', '/config', {
      body: {
        feeConfigs: [
          {
            feeType: 'CROSS_CURRENCY_TRANSACTION',
            sourceCurrency: 'USDC',
            variableFeeBps: 20,
            fixedFee: { amount: 25, currency: 'USDC' },
          },
        ],
      },
    });
    const source = await fundedUsd(t, 1_000_000);
    expectSendingLock(await quoted(t, source.id, 'MXN_ACCOUNT', 'SENDING', 10_000), 10_000);
  });

  it("executing a quote with a platform fee: the source pays totalSendingAmount, Grid keeps its fees, the platform's share goes to its account", async () => {
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
    const source = await fundedUsd(t, 1_000_000);
    const quote = await quoted(t, source.id, 'MXN_ACCOUNT', 'RECEIVING', 500_000);
    expect((await executeQuote(t, quote.id)).body.status).toBe('COMPLETED');
    // The source is the platform's own USD account, so the platform's share of the fees comes back to it.
    const left = 1_000_000 - quote.totalSendingAmount + quote.platformFeesIncluded;
    expect(await balances(t, source.id)).toEqual({ balance: left, totalBalance: left });
    expect(await systemAccount(t, 'EXTERNAL_RAILS', 'MXN')).toEqual({ available: 500_000n, held: 0n });
    expect(await systemAccount(t, 'FX_LIQUIDITY', 'USD')).toEqual({
      available: BigInt(quote.totalSendingAmount - quote.feesIncluded),
      held: 0n,
    });
    expect(await systemAccount(t, 'FEES', 'USD')).toEqual({
      available: BigInt(quote.feesIncluded - quote.platformFeesIncluded),
      held: 0n,
    });
    await expectBalancedBooks(t);
  });

  it('the platform\'s share of the fees settles to the platform\'s internal account (FeeConfig: "settled to the platform internal account")', async () => {
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
    const customer = await createCustomer(t, individualBody('Jordan Rivera'));
    const accounts = await t.api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`,
    );
    const usd = accounts.body.data[0];
    await fund(t, usd.id, 100_000);
    const destination = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('MXN_ACCOUNT'), customerId: customer.id },
    });
    const quote = (await createQuote(t, accountQuoteBody(usd.id, destination.body.id, { amount: 50_000 }))).body;
    expect(quote.platformFeesIncluded).toBe(25 + 100);
    expect((await executeQuote(t, quote.id)).body.status).toBe('COMPLETED');
    expect(await balances(t, platformUsd.id)).toEqual({
      balance: 1_000 + quote.platformFeesIncluded,
      totalBalance: 1_000 + quote.platformFeesIncluded,
    });
    await expectBalancedBooks(t);
  });

  it('a quote past the maximum on the receiving side is 400 AMOUNT_OUT_OF_RANGE', async () => {
    const t = await buildAtStart();
    // Let USD go to the maximum, so only the receiving side can overflow.
    const current = (await t.api('GET', '/config')).body;
    const patched = await t.api('PATCH', '/config', {
      body: {
        supportedCurrencies: current.supportedCurrencies.map((c: any) =>
          c.currencyCode === 'USD' ? { ...c, maxAmount: 9_000_000_000_000_000 } : c,
        ),
      },
    });
    expect(patched.status).toBe(200);
    const source = await fundedUsd(t, 1_000);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const reply = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 9_000_000_000_000_000 }));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      code: 'AMOUNT_OUT_OF_RANGE',
      details: { errors: [{ field: 'lockedCurrencyAmount' }] },
    });
    const receiving = await createQuote(
      t,
      accountQuoteBody(source.id, destination.id, { side: 'RECEIVING', amount: 9_000_000_000_000_000 }),
    );
    expect(receiving.status).toBe(201);
    expect(receiving.body.totalReceivingAmount).toBe(9_000_000_000_000_000);
    const eur = await externalAccount(t, 'EUR_ACCOUNT');
    const tooMuch = await createQuote(
      t,
      accountQuoteBody(source.id, eur.id, { side: 'RECEIVING', amount: 9_000_000_000_000_000 }),
    );
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.code).toBe('AMOUNT_OUT_OF_RANGE');
  });

  it('the same request in the same window gives the same quote; the next window may not', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 1_000_000);
    const destination = await externalAccount(t, 'EUR_ACCOUNT');
    const a = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    await t.advanceClock(299);
    const b = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    expect([b.exchangeRate, b.totalReceivingAmount, b.feesIncluded]).toEqual([
      a.exchangeRate,
      a.totalReceivingAmount,
      a.feesIncluded,
    ]);
    await t.advanceClock(1);
    const c = (await createQuote(t, accountQuoteBody(source.id, destination.id))).body;
    expect(c.exchangeRate).toBe(decimalToNumber(customerRate('USD', 'EUR', at(RATE_WINDOW_MS))));
    expect(c.totalReceivingAmount).toBe(
      Number(convertedFloor(BigInt(10_000 - c.feesIncluded), c.exchangeRate, 'USD', 'EUR')),
    );
  });
});

describe('a quote checked against the published rules alone (no src/rates)', () => {
  // docs/quotes.md (Rates and fees): MXN 17.25 per USD and BTC 0.000015 per USD, each moved by at most
  // ±0.2% per 5-minute window; the customer's rate is the cross rate less 0.5%, to 8
  // significant digits. Grid's fees: 10 cents fixed and 0.3% rounded up.
  const within = (value: number, centre: number, low: number, high: number) => {
    expect(value).toBeGreaterThanOrEqual(centre * low);
    expect(value).toBeLessThanOrEqual(centre * high);
  };

  /** A decimal number's exact digits: mantissa and scale, from its shortest text. */
  function exactDecimal(value: number): { mantissa: bigint; scale: number } {
    const [whole, fraction = ''] = String(value).split('.');
    return { mantissa: BigInt(`${whole}${fraction}`), scale: fraction.length };
  }

  it('USD -> MXN, 100.00 USD locked on the sending side', async () => {
    const t = await buildAtStart();
    const source = await fundedUsd(t, 1_000_000);
    const destination = await externalAccount(t, 'MXN_ACCOUNT');
    const quote = (await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: 10_000 }))).body;
    expect(quote.feesIncluded).toBe(10 + 30);
    expect(quote.platformFeesIncluded).toBe(0);
    within(quote.exchangeRate, 17.25 * 0.995, 0.998, 1.002);
    // At most 8 significant digits.
    expect(Number(quote.exchangeRate.toPrecision(8))).toBe(quote.exchangeRate);
    // receiving = floor((sending - fees) x rate), both currencies with 2 decimals.
    const rate = exactDecimal(quote.exchangeRate);
    expect(BigInt(quote.totalReceivingAmount)).toBe((9_960n * rate.mantissa) / 10n ** BigInt(rate.scale));
    expect(quote.rateDetails).toMatchObject({
      counterpartyFixedFee: 0,
      gridApiFixedFee: 10,
      gridApiVariableFeeRate: 0.003,
      gridApiVariableFeeAmount: 30,
    });
    // Millisatoshis per cent after the variable fee: 0.000015 BTC per USD is 15000 msat per cent.
    within(quote.rateDetails.gridApiMultiplier, 15_000 * 0.997, 0.998, 1.002);
    // The two multipliers compose to the quote: what is left after the fixed fee, through msats, to centavos.
    const composed = (10_000 - 10) * quote.rateDetails.gridApiMultiplier * quote.rateDetails.counterpartyMultiplier;
    within(composed, quote.totalReceivingAmount, 0.9999, 1.0001);
  });
});
