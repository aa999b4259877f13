// Exchange rates and fees of the sandbox: deterministic, so the same request at the same
// sandbox time always gives the same quote.
//
// Rates. Every currency has a mid rate against the US dollar (whole units per USD). Fiat
// currencies and bitcoin drift by up to ±0.2% at each 5-minute boundary of the platform's
// sandbox clock, by an amount derived from the currency and the window (a hash, no
// randomness); USD-pegged stablecoins stay at 1. The rate a customer gets is the cross rate
// less a spread of 0.5%, rounded to 8 significant digits. That rounded decimal is exact: the
// API shows it as `exchangeRate` and the amount arithmetic uses it as is.
//
// `exchangeRate` is receiving units per sending unit (USD→EUR about 0.92): the reference's
// examples read it that way and its field description the other way round; railyard follows
// the examples, so that receiving = (sending − fees) × exchangeRate, in whole units.
//
// Rounding rule (one rounding per amount, never in the customer's favour by more than one
// smallest unit): a variable fee is rounded up to the smallest unit of the sending currency;
// a converted amount is rounded down to the smallest unit of the receiving currency; a
// sending amount derived from a locked receiving amount is the smallest one whose conversion
// reaches it (rounded up). Everything is integer arithmetic on bigint.

import { createHash } from 'node:crypto';
import { currencyInfo } from '../currencies.js';
import { ownEntry } from '../json.js';
import { BALANCE_MAX } from '../ledger/index.js';

/** Rates change only when the platform's clock crosses a multiple of this. */
export const RATE_WINDOW_MS = 5 * 60 * 1000;
/** The spread the customer pays on every conversion, in basis points. */
export const SPREAD_BPS = 50n;
/** How far a rate moves at most between two windows, in basis points. */
const DRIFT_BPS_MAX = 20;
/** Grid's fees in the sandbox: a fixed fee worth 0.10 USD and 0.3% of the sending amount. */
export const GRID_FIXED_FEE_USD_CENTS = 10;
export const GRID_VARIABLE_FEE_BPS = 30n;
/** The most any amount may be, in the smallest unit: the ledger's balance maximum, the reference's 9e15. */
export const AMOUNT_MAX = BALANCE_MAX;

/** Whole units of each currency per US dollar, at the anchor of the sandbox (window drift applies). */
const UNITS_PER_USD: Record<string, number> = {
  AED: 3.6725,
  AUD: 1.52,
  BDT: 110,
  BRL: 5.1,
  BWP: 13.6,
  CAD: 1.36,
  CHF: 0.9,
  CNY: 7.24,
  COP: 3950,
  DKK: 6.86,
  EGP: 48.5,
  EUR: 0.92,
  GBP: 0.79,
  GHS: 15.5,
  GTQ: 7.78,
  HKD: 7.8,
  HTG: 132,
  IDR: 15800,
  INR: 83.2,
  JMD: 156,
  JPY: 151,
  KES: 129,
  MWK: 1735,
  MXN: 17.25,
  MYR: 4.7,
  NGN: 1500,
  PHP: 56.5,
  PKR: 278,
  RWF: 1300,
  SGD: 1.34,
  THB: 36.5,
  TZS: 2600,
  UGX: 3800,
  USD: 1,
  VND: 25000,
  XAF: 605,
  XOF: 605,
  ZAR: 18.4,
  ZMW: 26.5,
  BTC: 0.000015,
  USDC: 1,
  USDT: 1,
  USDB: 1,
};

const PEGGED = new Set(['USD', 'USDC', 'USDT', 'USDB']);

export function hasRate(currency: string): boolean {
  return ownEntry(UNITS_PER_USD, currency) !== undefined && currencyInfo(currency) !== undefined;
}

export function ratedCurrencies(): string[] {
  return Object.keys(UNITS_PER_USD).filter(hasRate).sort();
}

export function rateWindow(at: Date): number {
  return Math.floor(at.getTime() / RATE_WINDOW_MS);
}

/** When the rate in force at `at` took effect. */
export function rateUpdatedAt(at: Date): Date {
  return new Date(rateWindow(at) * RATE_WINDOW_MS);
}

// The drifts of the most recent window asked for, by currency: every quote of a window
// needs the same few, and each costs a hash.
let driftWindow = Number.NaN;
const driftOfWindow = new Map<string, number>();

function driftBps(currency: string, window: number): number {
  if (PEGGED.has(currency)) return 0;
  if (window !== driftWindow) {
    driftWindow = window;
    driftOfWindow.clear();
  }
  let drift = driftOfWindow.get(currency);
  if (drift === undefined) {
    const digest = createHash('sha256').update(`railyard-rate:${currency}:${window}`).digest();
    drift = (digest.readUInt16BE(0) % (2 * DRIFT_BPS_MAX + 1)) - DRIFT_BPS_MAX;
    driftOfWindow.set(currency, drift);
  }
  return drift;
}

/** Whole units of `currency` per US dollar in the window of `at`. */
export function unitsPerUsd(currency: string, at: Date): number {
  const base = ownEntry(UNITS_PER_USD, currency);
  if (base === undefined) throw new Error(`no rate for ${currency}`);
  return base * (1 + driftBps(currency, rateWindow(at)) / 10_000);
}

/** A positive decimal: mantissa × 10^-scale (scale may be negative). */
export interface Decimal {
  mantissa: bigint;
  scale: number;
}

const SIGNIFICANT_DIGITS = 8;

export function toDecimal(value: number): Decimal {
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`not a positive rate: ${value}`);
  const exponent = Math.floor(Math.log10(value));
  const scale = SIGNIFICANT_DIGITS - 1 - exponent;
  let mantissa = BigInt(Math.round(value * 10 ** scale));
  // Math.log10 can be off by one at exact powers of ten; keep 8 significant digits.
  if (mantissa >= 10n ** BigInt(SIGNIFICANT_DIGITS)) return { mantissa: mantissa / 10n, scale: scale - 1 };
  if (mantissa === 0n) mantissa = 1n;
  return { mantissa, scale };
}

export function decimalToNumber(d: Decimal): number {
  return Number(`${d.mantissa}e${-d.scale}`);
}

export function decimalToString(d: Decimal): string {
  return `${d.mantissa}e${-d.scale}`;
}

export function parseDecimal(text: string): Decimal {
  const [m, e] = text.split('e');
  return { mantissa: BigInt(m!), scale: -Number(e) };
}

/** The mid-market rate: whole units of `to` per whole unit of `from`. */
export function midRate(from: string, to: string, at: Date): number {
  return unitsPerUsd(to, at) / unitsPerUsd(from, at);
}

/** The customer's rate: the mid rate less the spread, rounded to 8 significant digits. */
export function customerRate(from: string, to: string, at: Date): Decimal {
  return toDecimal((midRate(from, to, at) * Number(10_000n - SPREAD_BPS)) / 10_000);
}

function decimalsOf(currency: string): number {
  const info = currencyInfo(currency);
  if (info === undefined) throw new Error(`unknown currency ${currency}`);
  return info.decimals;
}

const pow10 = (n: number) => 10n ** BigInt(n);
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/** The factor between smallest units: received = net × mantissa × 10^exp. */
function unitExponent(rate: Decimal, from: string, to: string): number {
  return decimalsOf(to) - decimalsOf(from) - rate.scale;
}

/** Converts smallest units of `from` into smallest units of `to`, rounding down. */
export function convertDown(net: bigint, rate: Decimal, from: string, to: string): bigint {
  const exp = unitExponent(rate, from, to);
  return exp >= 0 ? net * rate.mantissa * pow10(exp) : (net * rate.mantissa) / pow10(-exp);
}

/** The smallest amount of `from` whose conversion (rounded down) is at least `received`. */
export function convertUpInverse(received: bigint, rate: Decimal, from: string, to: string): bigint {
  const exp = unitExponent(rate, from, to);
  return exp >= 0 ? ceilDiv(received, rate.mantissa * pow10(exp)) : ceilDiv(received * pow10(-exp), rate.mantissa);
}

/**
 * What an amount (smallest units of `from`) is worth in smallest units of `to` at the
 * mid-market rate, rounded up: how a limit set in one currency measures an amount in another.
 */
export function valueAtMidRate(amount: bigint, from: string, to: string, at: Date): bigint {
  if (from === to) return amount;
  const rate = toDecimal(midRate(from, to, at));
  const exp = unitExponent(rate, from, to);
  return exp >= 0 ? amount * rate.mantissa * pow10(exp) : ceilDiv(amount * rate.mantissa, pow10(-exp));
}

/** A fee in basis points of an amount, rounded up. */
export function bpsOf(amount: bigint, bps: bigint): bigint {
  return ceilDiv(amount * bps, 10_000n);
}

/** Grid's fixed fee in the smallest unit of `currency`: 0.10 USD at the mid rate, rounded up. */
export function gridFixedFee(currency: string, at: Date): bigint {
  const units = (GRID_FIXED_FEE_USD_CENTS / 100) * unitsPerUsd(currency, at) * 10 ** decimalsOf(currency);
  return BigInt(Math.ceil(Number(units.toPrecision(12))));
}

export interface FeeSchedule {
  gridFixed: bigint;
  gridBps: bigint;
  platformFixed: bigint;
  platformBps: bigint;
}

export interface Conversion {
  sendingCurrency: string;
  receivingCurrency: string;
  rate: Decimal;
  totalSending: bigint;
  totalReceiving: bigint;
  /** Every fee, in the smallest unit of the sending currency. */
  fees: bigint;
  platformFees: bigint;
  gridFixedFee: bigint;
  gridVariableFee: bigint;
}

/** Why a conversion is impossible for this amount. */
export class ConversionOutOfRange extends Error {}

/** The fees a sending amount of `total` is charged (all of them in `all`), whether or not it can be quoted. */
export function feesFor(total: bigint, schedule: FeeSchedule) {
  const gridVariable = bpsOf(total, schedule.gridBps);
  const platformVariable = bpsOf(total, schedule.platformBps);
  const platform = schedule.platformFixed + platformVariable;
  return { gridVariable, platform, all: schedule.gridFixed + gridVariable + platform };
}

function build(
  from: string,
  to: string,
  rate: Decimal,
  total: bigint,
  received: bigint,
  schedule: FeeSchedule,
): Conversion {
  const fees = feesFor(total, schedule);
  if (total > AMOUNT_MAX)
    throw new ConversionOutOfRange(`the sending amount would be ${total}, past the maximum of ${AMOUNT_MAX}`);
  if (received > AMOUNT_MAX)
    throw new ConversionOutOfRange(`the receiving amount would be ${received}, past the maximum of ${AMOUNT_MAX}`);
  if (received <= 0n) throw new ConversionOutOfRange('after fees, nothing would be received');
  return {
    sendingCurrency: from,
    receivingCurrency: to,
    rate,
    totalSending: total,
    totalReceiving: received,
    fees: fees.all,
    platformFees: fees.platform,
    gridFixedFee: schedule.gridFixed,
    gridVariableFee: fees.gridVariable,
  };
}

/** The sending amount is fixed: fees come out of it, the rest is converted (rounded down). */
export function convertSending(
  from: string,
  to: string,
  rate: Decimal,
  total: bigint,
  schedule: FeeSchedule,
): Conversion {
  const fees = feesFor(total, schedule);
  const net = total - fees.all;
  if (net <= 0n) throw new ConversionOutOfRange(`the fees (${fees.all}) take the whole sending amount`);
  return build(from, to, rate, total, convertDown(net, rate, from, to), schedule);
}

/** The receiving amount is fixed: the smallest sending amount that covers it and its fees. */
export function convertReceiving(
  from: string,
  to: string,
  rate: Decimal,
  received: bigint,
  schedule: FeeSchedule,
): Conversion {
  const net = convertUpInverse(received, rate, from, to);
  const netOf = (total: bigint) => total - feesFor(total, schedule).all;
  const variableBps = schedule.gridBps + schedule.platformBps;
  if (variableBps >= 10_000n) throw new ConversionOutOfRange('the variable fees take the whole amount');
  // The closed form lands within a unit or two; step to the smallest total that covers net.
  let total = ceilDiv((net + schedule.gridFixed + schedule.platformFixed) * 10_000n, 10_000n - variableBps);
  while (netOf(total) < net) total += 1n;
  while (total > 1n && netOf(total - 1n) >= net) total -= 1n;
  return build(from, to, rate, total, received, schedule);
}
