// The UMA providers of the sandbox: a fixed, made-up directory (the domains and logos are
// under the reserved .example top-level domain, plus railyard's own sandbox UMA domain,
// where the test addresses of the receiver lookups live). The same query always gives the
// same page. Solent Payments stands for a provider that is not on the platform's allow list.
//
// getAvailableUmaProviders declares no 400, so the query is read leniently: a limit that
// is not a whole number counts as 20 and is kept within 1..100, a sortOrder other than asc
// counts as desc, a cursor railyard did not issue starts from the first page, and
// hasBlockedProviders=false leaves out providers that are not on the allow list.

import { currencyObject } from '../internal-accounts/service.js';

interface ProviderRow {
  name: string;
  domain: string;
  regions: string[];
  currencies: string[];
  lei: string;
  allowListed: boolean;
}

const PROVIDERS: readonly ProviderRow[] = [
  {
    name: 'Andes Remesas',
    domain: 'andes-remesas.example',
    regions: ['CO', 'PE', 'EC'],
    currencies: ['COP', 'USD'],
    lei: '5493000RAILYARD00001',
    allowListed: true,
  },
  {
    name: 'Baltic Wallet',
    domain: 'baltic-wallet.example',
    regions: ['EE', 'LV', 'LT'],
    currencies: ['EUR'],
    lei: '5493000RAILYARD00002',
    allowListed: true,
  },
  {
    name: 'Ganges Pay',
    domain: 'ganges-pay.example',
    regions: ['IN'],
    currencies: ['INR', 'USD'],
    lei: '5493000RAILYARD00003',
    allowListed: true,
  },
  {
    name: 'Lagos Transfer',
    domain: 'lagos-transfer.example',
    regions: ['NG'],
    currencies: ['NGN', 'USD'],
    lei: '5493000RAILYARD00004',
    allowListed: true,
  },
  {
    name: 'Maple Money',
    domain: 'maple-money.example',
    regions: ['CA', 'US'],
    currencies: ['CAD', 'USD'],
    lei: '5493000RAILYARD00005',
    allowListed: true,
  },
  {
    name: 'Railyard Sandbox UMA',
    domain: 'sandbox.uma.money',
    regions: ['US', 'DE', 'MX'],
    currencies: ['USD', 'EUR', 'MXN'],
    lei: '5493000RAILYARD00006',
    allowListed: true,
  },
  {
    name: 'Rio Grande Pagos',
    domain: 'rio-grande-pagos.example',
    regions: ['MX', 'US'],
    currencies: ['MXN', 'USD'],
    lei: '5493000RAILYARD00007',
    allowListed: true,
  },
  {
    name: 'Solent Payments',
    domain: 'solent-payments.example',
    regions: ['GB'],
    currencies: ['GBP', 'EUR'],
    lei: '5493000RAILYARD00008',
    allowListed: false,
  },
];

function present(row: ProviderRow) {
  return {
    name: row.name,
    supportedRegions: row.regions,
    domain: row.domain,
    logoUrl: `https://${row.domain === 'sandbox.uma.money' ? 'railyard.example' : row.domain}/logo.png`,
    supportedCurrencies: row.currencies.map(currencyObject),
    lei: row.lei,
    allowListStatus: row.allowListed,
  };
}

const CURSOR_PREFIX = 'uma-providers:';

function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(CURSOR_PREFIX)) return 0;
  const offset = Number(text.slice(CURSOR_PREFIX.length));
  return Number.isInteger(offset) && offset >= 0 ? offset : 0;
}

function limitOf(limit: string | undefined): number {
  const value = limit === undefined ? NaN : Number(limit);
  if (!Number.isInteger(value)) return 20;
  return Math.min(100, Math.max(1, value));
}

export interface UmaProviderQuery {
  countryCode?: string | undefined;
  currencyCode?: string | undefined;
  hasBlockedProviders?: string | undefined;
  limit?: string | undefined;
  cursor?: string | undefined;
  sortOrder?: string | undefined;
}

export function getAvailableUmaProviders(query: UmaProviderQuery) {
  const country = query.countryCode?.trim().toUpperCase();
  const currency = query.currencyCode?.trim().toUpperCase();
  const withBlocked = query.hasBlockedProviders?.trim().toLowerCase() !== 'false';
  let rows = PROVIDERS.filter(
    (p) =>
      (country === undefined || p.regions.includes(country)) &&
      (currency === undefined || p.currencies.includes(currency)) &&
      (withBlocked || p.allowListed),
  );
  // By name: ascending on request, descending by default.
  rows = [...rows].sort((a, b) => (a.name < b.name ? -1 : 1));
  if (query.sortOrder?.trim().toLowerCase() !== 'asc') rows.reverse();
  const offset = offsetOf(query.cursor);
  const limit = limitOf(query.limit);
  const page = rows.slice(offset, offset + limit);
  const hasMore = offset + limit < rows.length;
  return {
    data: page.map(present),
    hasMore,
    ...(hasMore ? { nextCursor: Buffer.from(`${CURSOR_PREFIX}${offset + limit}`).toString('base64url') } : {}),
    totalCount: rows.length,
  };
}
