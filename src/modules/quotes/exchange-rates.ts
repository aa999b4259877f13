// Exchange rates: what a quote would give now for each corridor the platform can quote.

import { iso } from '../../clock.js';
import type { Ctx } from '../../http/context.js';
import { FieldErrors } from '../../http/errors.js';
import {
  AMOUNT_MAX,
  ConversionOutOfRange,
  convertReceiving,
  convertSending,
  customerRate,
  decimalToNumber,
  feesFor,
  hasRate,
  ratedCurrencies,
  rateUpdatedAt,
  type FeeSchedule,
} from '../../rates/index.js';
import { ACCOUNT_TYPES } from '../external-accounts/account-types.js';
import { currencyObject } from '../internal-accounts/service.js';
import { readPlatformConfig } from '../platform/config.js';
import { feeSchedule, type QuoteInput } from './planning.js';

// ----------------------------------------------------------------------------- exchange rates

/** The rail a corridor pays out over: the first rail of the bank account type of that currency. */
function corridorRail(currency: string): string | undefined {
  const def = ACCOUNT_TYPES.find(
    (d) =>
      d.kind === 'BANK' &&
      Array.isArray(d.currencies) &&
      d.currencies.includes(currency) &&
      d.paymentRails !== undefined,
  );
  return def?.paymentRails?.[0];
}

/** The smallest sending amount a quote accepts: the one that delivers one smallest unit, fees included. */
function smallestQuotable(
  from: string,
  to: string,
  rate: ReturnType<typeof customerRate>,
  schedule: FeeSchedule,
): number {
  try {
    return Number(convertReceiving(from, to, rate, 1n, schedule).totalSending);
  } catch (err) {
    if (err instanceof ConversionOutOfRange) return Number.MAX_SAFE_INTEGER;
    throw err;
  }
}

export interface ExchangeRatesQuery {
  sourceCurrency?: string | undefined;
  destinationCurrency?: string[] | undefined;
  sendingAmount?: number | undefined;
}

const DEFAULT_SENDING_AMOUNT = 10_000;

export async function getExchangeRates(ctx: Ctx, query: ExchangeRatesQuery) {
  const errors = new FieldErrors();
  if (query.sourceCurrency !== undefined && !hasRate(query.sourceCurrency))
    errors.add('sourceCurrency', `is not a currency railyard quotes (${ratedCurrencies().join(', ')})`);
  for (const [i, code] of (query.destinationCurrency ?? []).entries()) {
    if (!hasRate(code)) errors.add(`destinationCurrency[${i}]`, `is not a currency railyard quotes: ${code}`);
  }
  errors.throwIfAny();
  const config = await readPlatformConfig(ctx.db.k, ctx.platformId);
  const sources =
    query.sourceCurrency !== undefined
      ? [query.sourceCurrency]
      : config.supportedCurrencies.map((c) => c.currencyCode).filter(hasRate);
  const destinations = query.destinationCurrency ?? ratedCurrencies();
  const amount = BigInt(query.sendingAmount ?? DEFAULT_SENDING_AMOUNT);
  const updatedAt = iso(rateUpdatedAt(ctx.now));
  const data = [];
  for (const from of sources) {
    const limits = config.supportedCurrencies.find((c) => c.currencyCode === from);
    const schedule = feeSchedule(
      config,
      { source: { sourceType: 'REALTIME_FUNDING', currency: from } } as QuoteInput,
      from,
      ctx.now,
    );
    for (const to of destinations) {
      const rail = corridorRail(to);
      if (to === from || rail === undefined) continue;
      const rate = customerRate(from, to, ctx.now);
      let receivingAmount = 0;
      // An amount too small to quote still shows what it would be charged, variable part included.
      let fees = feesFor(amount, schedule).all;
      try {
        const conversion = convertSending(from, to, rate, amount, schedule);
        receivingAmount = Number(conversion.totalReceiving);
        fees = conversion.fees;
      } catch (err) {
        if (!(err instanceof ConversionOutOfRange)) throw err;
      }
      data.push({
        sourceCurrency: currencyObject(from),
        sendingAmount: Number(amount),
        minSendingAmount: Math.max(limits?.minAmount ?? 1, smallestQuotable(from, to, rate, schedule)),
        maxSendingAmount: limits?.maxAmount ?? Number(AMOUNT_MAX),
        destinationCurrency: currencyObject(to),
        destinationPaymentRail: rail,
        receivingAmount,
        exchangeRate: decimalToNumber(rate),
        fees: { fixed: Number(schedule.gridFixed + schedule.platformFixed), total: Number(fees) },
        updatedAt,
      });
    }
  }
  return { data };
}
