// Amounts in major units with their currency, and times in the viewer's zone.

import { currencyInfo } from '../../src/currencies.js';

const learnedDecimals = new Map<string, number>();

/** Remembers the decimals of a currency object the API answered ({code, decimals}). */
export function learnCurrency(currency: unknown): void {
  if (typeof currency !== 'object' || currency === null) return;
  const { code, decimals } = currency as { code?: unknown; decimals?: unknown };
  if (typeof code === 'string' && typeof decimals === 'number') learnedDecimals.set(code, decimals);
}

export function decimalsOf(code: string): number {
  const known = learnedDecimals.get(code) ?? currencyInfo(code)?.decimals;
  if (known !== undefined) return known;
  // A stablecoin's own ledger currency is its id; the sandbox provider reports 6 decimals.
  if (code.startsWith('Stablecoin:')) return 6;
  return 2;
}

/** "1,234.56 USD" from an integer count of the smallest unit (a number or a decimal string). */
export function money(amount: number | string | bigint | undefined | null, code: string, decimals = decimalsOf(code)) {
  if (amount === undefined || amount === null || amount === '') return '—';
  let digits = typeof amount === 'string' ? amount.trim() : BigInt(Math.trunc(Number(amount))).toString();
  if (!/^-?\d+$/.test(digits)) return `${amount} ${code}`;
  const negative = digits.startsWith('-');
  if (negative) digits = digits.slice(1);
  digits = digits.padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = decimals > 0 ? `.${digits.slice(digits.length - decimals)}` : '';
  const label = code.startsWith('Stablecoin:') ? 'tokens' : code;
  return `${negative ? '−' : ''}${whole}${fraction} ${label}`;
}

/** An API CurrencyAmount ({amount, currency: {code, decimals}}) in major units. */
export function currencyAmount(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '—';
  const { amount, currency } = value as { amount?: number; currency?: { code?: string; decimals?: number } };
  learnCurrency(currency);
  if (currency?.code === undefined) return String(amount ?? '—');
  return money(amount, currency.code, currency.decimals ?? decimalsOf(currency.code));
}

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export const viewerZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** A stored time (ISO 8601, on the sandbox clock) in the viewer's zone. */
export function when(iso: string | undefined | null): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function clockTime(date: Date): string {
  return timeOnly.format(date);
}

/** "+6 min 5 s" for a clock offset in seconds. */
export function duration(seconds: number): string {
  const sign = seconds < 0 ? '−' : '+';
  let rest = Math.abs(Math.round(seconds));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['min', 60],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest} s`);
  return `${sign}${parts.join(' ')}`;
}

/** The short form of a long id ("Transaction:01a2…c332") for tables; the full id stays in the title. */
export function shortId(value: string | undefined | null): string {
  if (!value) return '—';
  const colon = value.indexOf(':');
  const tail = value.slice(colon + 1);
  return tail.length <= 14 ? value : `${value.slice(0, colon + 1)}…${tail.slice(-8)}`;
}
