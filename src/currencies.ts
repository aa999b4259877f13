// Currencies railyard knows: ISO 4217 fiat currencies of the account types plus the crypto
// assets of the wallet networks. Amounts are integers in the smallest unit, so `decimals`
// says how many of those units make one whole unit.

import { ownEntry } from './json.js';

export interface CurrencyInfo {
  code: string;
  name: string;
  symbol: string;
  decimals: number;
  crypto: boolean;
}

const fiat = (code: string, name: string, symbol: string, decimals = 2): CurrencyInfo => ({
  code,
  name,
  symbol,
  decimals,
  crypto: false,
});
const crypto = (code: string, name: string, symbol: string, decimals: number): CurrencyInfo => ({
  code,
  name,
  symbol,
  decimals,
  crypto: true,
});

export const CURRENCIES: readonly CurrencyInfo[] = [
  fiat('AED', 'UAE Dirham', 'د.إ'),
  fiat('AUD', 'Australian Dollar', 'A$'),
  fiat('BDT', 'Bangladeshi Taka', '৳'),
  fiat('BRL', 'Brazilian Real', 'R$'),
  fiat('BWP', 'Botswana Pula', 'P'),
  fiat('CAD', 'Canadian Dollar', 'CA$'),
  fiat('CHF', 'Swiss Franc', 'CHF'),
  fiat('CNY', 'Chinese Yuan', '¥'),
  fiat('COP', 'Colombian Peso', 'COL$'),
  fiat('DKK', 'Danish Krone', 'kr'),
  fiat('EGP', 'Egyptian Pound', 'E£'),
  fiat('EUR', 'Euro', '€'),
  fiat('GBP', 'Pound Sterling', '£'),
  fiat('GHS', 'Ghanaian Cedi', 'GH₵'),
  fiat('GTQ', 'Guatemalan Quetzal', 'Q'),
  fiat('HKD', 'Hong Kong Dollar', 'HK$'),
  fiat('HTG', 'Haitian Gourde', 'G'),
  fiat('IDR', 'Indonesian Rupiah', 'Rp'),
  fiat('INR', 'Indian Rupee', '₹'),
  fiat('JMD', 'Jamaican Dollar', 'J$'),
  fiat('JPY', 'Japanese Yen', '¥', 0),
  fiat('KES', 'Kenyan Shilling', 'KSh'),
  fiat('MWK', 'Malawian Kwacha', 'MK'),
  fiat('MXN', 'Mexican Peso', 'MX$'),
  fiat('MYR', 'Malaysian Ringgit', 'RM'),
  fiat('NGN', 'Nigerian Naira', '₦'),
  fiat('PHP', 'Philippine Peso', '₱'),
  fiat('PKR', 'Pakistani Rupee', 'Rs'),
  fiat('RWF', 'Rwandan Franc', 'FRw', 0),
  fiat('SGD', 'Singapore Dollar', 'S$'),
  fiat('THB', 'Thai Baht', '฿'),
  fiat('TZS', 'Tanzanian Shilling', 'TSh'),
  fiat('UGX', 'Ugandan Shilling', 'USh', 0),
  fiat('USD', 'US Dollar', '$'),
  fiat('VND', 'Vietnamese Dong', '₫', 0),
  fiat('XAF', 'Central African CFA Franc', 'FCFA', 0),
  fiat('XOF', 'West African CFA Franc', 'CFA', 0),
  fiat('ZAR', 'South African Rand', 'R'),
  fiat('ZMW', 'Zambian Kwacha', 'ZK'),
  crypto('BTC', 'Bitcoin', '₿', 8),
  crypto('USDC', 'USD Coin', '', 6),
  crypto('USDT', 'Tether', '', 6),
  crypto('USDB', 'USDB', '', 6),
];

const BY_CODE = new Map(CURRENCIES.map((c) => [c.code, c]));

export function currencyInfo(code: string): CurrencyInfo | undefined {
  return BY_CODE.get(code);
}

export function isFiat(code: string): boolean {
  return BY_CODE.get(code)?.crypto === false;
}

export interface CryptoNetwork {
  /** The name a request gives it (RealtimeFundingQuoteSource.cryptoNetwork). */
  network: string;
  /** The account type of a deposit on it (the reference's Payment*Info shapes). */
  accountType: string;
}

/**
 * The networks each crypto currency moves on, as the reference's payment-instruction shapes
 * pair them (assetType enums). The first is where funding instructions point when no network
 * is named; `required`: a funding must name one (a stablecoin issued on several chains).
 */
const CRYPTO_NETWORKS: Readonly<Record<string, { required: boolean; networks: readonly CryptoNetwork[] }>> = {
  BTC: {
    required: false,
    networks: [
      { network: 'SPARK', accountType: 'SPARK_WALLET' },
      { network: 'LIGHTNING', accountType: 'LIGHTNING' },
      { network: 'BITCOIN', accountType: 'BITCOIN_L1' },
    ],
  },
  USDB: { required: false, networks: [{ network: 'SPARK', accountType: 'SPARK_WALLET' }] },
  USDC: {
    required: true,
    networks: [
      { network: 'SOLANA', accountType: 'SOLANA_WALLET' },
      { network: 'BASE', accountType: 'BASE_WALLET' },
      { network: 'POLYGON', accountType: 'POLYGON_WALLET' },
      { network: 'ETHEREUM', accountType: 'ETHEREUM_WALLET' },
    ],
  },
  USDT: {
    required: true,
    networks: [
      { network: 'TRON', accountType: 'TRON_WALLET' },
      { network: 'SOLANA', accountType: 'SOLANA_WALLET' },
      { network: 'ETHEREUM', accountType: 'ETHEREUM_WALLET' },
      { network: 'PLASMA', accountType: 'PLASMA_WALLET' },
    ],
  },
};

/** The networks a crypto currency moves on (empty for fiat and unknown codes). */
export function cryptoNetworksOf(currency: string): readonly CryptoNetwork[] {
  return ownEntry(CRYPTO_NETWORKS, currency)?.networks ?? [];
}

/** True when a funding in `currency` must name its network (see CRYPTO_NETWORKS). */
export function cryptoNetworkRequired(currency: string): boolean {
  return ownEntry(CRYPTO_NETWORKS, currency)?.required === true;
}
