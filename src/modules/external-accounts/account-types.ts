// Every account type of the reference as data: its fields and their formats, its payment
// rails, its beneficiary shape and which fields identify it. The request and response
// schemas (schemas.ts), the identifier rules (duplicates, sandbox suffixes) and the
// OpenAPI document are all generated from this one table.

import type { StrictRules } from '../../http/schemas.js';

export type AccountKind = 'BANK' | 'WALLET' | 'LIGHTNING';

export interface FieldDef {
  required?: boolean;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  enum?: readonly string[];
  /**
   * A named format (formats.ts) every request is checked against. Only where the reference or
   * the sandbox docs state the rule: the Spark address shape (an invalid Spark address is
   * refused in the sandbox); the rest are strict rules.
   */
  format?: string;
  /** Rules applied only for platforms in strict mode (StrictRules in http/schemas.ts). */
  strict?: StrictRules;
  /** How the value is compared when detecting duplicates. */
  normalize?: 'upper' | 'lower';
}

export interface IndividualBeneficiaryDef {
  /** Fields required for this currency besides beneficiaryType and fullName. */
  require?: readonly string[];
  /** Fields only this currency's individual beneficiary has. */
  extra?: Record<string, FieldDef>;
}

export interface AccountTypeDef {
  accountType: string;
  kind: AccountKind;
  /** Prefix of the schema names, as the reference names them (Usd → UsdExternalAccountInfo). */
  schemaPrefix: string;
  /** Currencies this account type can hold; for SWIFT any ISO 4217 code. */
  currencies: readonly string[] | 'ANY_FIAT';
  fields: Record<string, FieldDef>;
  /** Bank types: the rails a response lists; `railsFor` narrows them by the fields given. */
  paymentRails?: readonly string[];
  railsFor?: (info: Record<string, unknown>) => string[];
  /** Bank types carry a required beneficiary; wallets an optional one. */
  beneficiary?: IndividualBeneficiaryDef;
  /** Identifier fields in priority order; the first present one is the primary identifier. */
  primary: readonly string[];
  /** Fields that together identify the account, for duplicate detection. */
  identity: readonly string[];
  /** At least one of these fields must be given (when none is required on its own). */
  anyOf?: readonly string[];
  /** Exactly one of these fields must be given. */
  exactlyOne?: readonly string[];
}

const swiftCode: FieldDef = {
  pattern: '^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$',
  minLength: 8,
  maxLength: 11,
  normalize: 'upper',
};
const phone = (pattern = '^\\+[0-9]{6,14}$'): FieldDef => ({ pattern, minLength: 7, maxLength: 15 });
const bankName: FieldDef = { minLength: 1, maxLength: 255 };
const accountNumber: FieldDef = { minLength: 1, maxLength: 34 };
const digits = (min: number, max = min): FieldDef => ({
  pattern: min === max ? `^[0-9]{${min}}$` : `^[0-9]{${min},${max}}$`,
  minLength: min,
  maxLength: max,
});
const bankAccountType: FieldDef = { enum: ['CHECKING', 'SAVINGS'] };
const provider: FieldDef = { minLength: 1, maxLength: 255 };
const iban = (pattern: string, length?: number): FieldDef => ({
  pattern,
  ...(length ? { minLength: length, maxLength: length } : { minLength: 15, maxLength: 34 }),
  strict: { format: 'iban' },
  normalize: 'upper',
});
const req = (def: FieldDef): FieldDef => ({ ...def, required: true });

/** Types that can pay out by bank transfer or mobile money, depending on what identifies them. */
const bankOrMobile = (info: Record<string, unknown>): string[] => {
  const rails: string[] = [];
  if (info.accountNumber !== undefined || info.iban !== undefined) rails.push('BANK_TRANSFER');
  if (info.phoneNumber !== undefined) rails.push('MOBILE_MONEY');
  return rails.length > 0 ? rails : ['BANK_TRANSFER'];
};

function bank(
  currency: string,
  fields: Record<string, FieldDef>,
  options: {
    rails: readonly string[];
    railsFor?: AccountTypeDef['railsFor'];
    primary: readonly string[];
    identity: readonly string[];
    anyOf?: readonly string[];
    beneficiary?: IndividualBeneficiaryDef;
    currencies?: readonly string[];
  },
): AccountTypeDef {
  const prefix = currency.charAt(0) + currency.slice(1).toLowerCase();
  return {
    accountType: `${currency}_ACCOUNT`,
    kind: 'BANK',
    schemaPrefix: prefix,
    currencies: options.currencies ?? [currency],
    fields,
    paymentRails: options.rails,
    ...(options.railsFor ? { railsFor: options.railsFor } : {}),
    beneficiary: options.beneficiary ?? {},
    primary: options.primary,
    identity: options.identity,
    ...(options.anyOf ? { anyOf: options.anyOf } : {}),
  };
}

const mobileMoney = (currency: string, phonePattern?: string, extra: Record<string, FieldDef> = {}) =>
  bank(
    currency,
    { phoneNumber: req(phone(phonePattern)), provider: req(provider), ...extra },
    { rails: ['MOBILE_MONEY'], primary: ['phoneNumber'], identity: ['phoneNumber', 'provider'] },
  );

const swiftBank = (currency: string, bankNameRequired = true) =>
  bank(
    currency,
    {
      bankName: bankNameRequired ? req(bankName) : bankName,
      accountNumber: req(accountNumber),
      swiftCode: req(swiftCode),
    },
    {
      rails: currency === 'SGD' ? ['PAYNOW', 'FAST', 'BANK_TRANSFER'] : ['BANK_TRANSFER'],
      primary: ['accountNumber'],
      identity: ['swiftCode', 'accountNumber'],
    },
  );

const bankOrPhone = (currency: string, fields: Record<string, FieldDef>, primary = ['accountNumber', 'phoneNumber']) =>
  bank(currency, fields, {
    rails: ['BANK_TRANSFER', 'MOBILE_MONEY'],
    railsFor: bankOrMobile,
    primary,
    identity: primary,
    anyOf: primary,
  });

function wallet(
  accountType: string,
  schemaPrefix: string,
  address: Pick<FieldDef, 'format' | 'strict'>,
  currencies: readonly string[],
  normalize?: 'lower',
): AccountTypeDef {
  return {
    accountType,
    kind: 'WALLET',
    schemaPrefix,
    currencies,
    fields: { address: { required: true, ...address, ...(normalize ? { normalize } : {}) } },
    beneficiary: {},
    primary: ['address'],
    identity: ['address'],
  };
}

const EVM_ADDRESS: Pick<FieldDef, 'strict'> = { strict: { format: 'evm-address' } };

export const ACCOUNT_TYPES: readonly AccountTypeDef[] = [
  bank(
    'AED',
    { iban: req(iban('^AE[0-9]{21}$', 23)), swiftCode },
    {
      rails: ['BANK_TRANSFER'],
      primary: ['iban'],
      identity: ['iban'],
      beneficiary: { require: ['address'] },
    },
  ),
  bankOrPhone('BDT', {
    accountNumber,
    bankName: req(bankName),
    branchCode: digits(5),
    swiftCode,
    phoneNumber: phone(),
  }),
  bank(
    'BRL',
    {
      pixKey: req({ minLength: 1, maxLength: 77 }),
      pixKeyType: req({ enum: ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'] }),
      taxId: req(digits(11, 14)),
    },
    { rails: ['PIX'], primary: ['pixKey'], identity: ['pixKeyType', 'pixKey'] },
  ),
  mobileMoney('BWP'),
  bank(
    'CAD',
    { bankCode: req(digits(3)), branchCode: req(digits(5)), accountNumber: req(digits(7, 12)) },
    {
      rails: ['BANK_TRANSFER'],
      primary: ['accountNumber'],
      identity: ['bankCode', 'branchCode', 'accountNumber'],
      beneficiary: { extra: { registrationNumber: {} } },
    },
  ),
  bankOrPhone('CNY', { accountNumber, bankName: req(bankName), phoneNumber: phone() }),
  bank(
    'COP',
    { accountNumber, bankAccountType, bankName: req(bankName), phoneNumber: phone() },
    {
      rails: ['BANK_TRANSFER', 'MOBILE_MONEY'],
      railsFor: bankOrMobile,
      primary: ['accountNumber', 'phoneNumber'],
      identity: ['accountNumber', 'phoneNumber'],
      anyOf: ['accountNumber', 'phoneNumber'],
      beneficiary: {
        extra: {
          documentType: { enum: ['CC', 'CE', 'TI', 'NIT', 'PP'] },
          documentNumber: { minLength: 1, maxLength: 50 },
        },
      },
    },
  ),
  bank(
    'DKK',
    { iban: req(iban('^DK[0-9]{16}$', 18)), swiftCode },
    { rails: ['SEPA', 'SEPA_INSTANT'], primary: ['iban'], identity: ['iban'] },
  ),
  bankOrPhone('EGP', { iban: iban('^EG[0-9]{27}$', 29), bankName: req(bankName), phoneNumber: phone() }, [
    'iban',
    'phoneNumber',
  ]),
  bank(
    'EUR',
    { iban: req(iban('^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$')), swiftCode },
    {
      rails: ['SEPA', 'SEPA_INSTANT'],
      primary: ['iban'],
      identity: ['iban'],
      beneficiary: { require: ['countryOfResidence'] },
    },
  ),
  bank(
    'GBP',
    { sortCode: req(digits(6)), accountNumber: req(digits(8)) },
    {
      rails: ['FASTER_PAYMENTS'],
      primary: ['accountNumber'],
      identity: ['sortCode', 'accountNumber'],
    },
  ),
  bankOrPhone('GHS', { accountNumber, bankName: req(bankName), phoneNumber: phone() }),
  bank(
    'GTQ',
    { accountNumber: req(accountNumber), bankAccountType: req(bankAccountType), bankName: req(bankName) },
    {
      rails: ['BANK_TRANSFER'],
      primary: ['accountNumber'],
      identity: ['bankName', 'accountNumber'],
      beneficiary: { require: ['countryOfResidence', 'phoneNumber'] },
    },
  ),
  swiftBank('HKD'),
  bank(
    'HTG',
    { phoneNumber: req(phone()) },
    { rails: ['MOBILE_MONEY'], primary: ['phoneNumber'], identity: ['phoneNumber'] },
  ),
  bank(
    'IDR',
    {
      bankName: req(bankName),
      accountNumber: req(accountNumber),
      swiftCode: req(swiftCode),
      phoneNumber: req(phone('^\\+62[0-9]{9,12}$')),
    },
    { rails: ['BANK_TRANSFER'], primary: ['accountNumber'], identity: ['swiftCode', 'accountNumber'] },
  ),
  bank(
    'INR',
    {
      vpa: { pattern: '^[a-zA-Z0-9.\\-_]+@[a-zA-Z0-9]+$', minLength: 3, maxLength: 255, normalize: 'lower' },
      accountNumber: digits(9, 18),
      ifsc: { pattern: '^[A-Z]{4}0[A-Z0-9]{6}$', minLength: 11, maxLength: 11 },
      rail: { minLength: 1, maxLength: 32 },
      bankName,
    },
    {
      rails: ['UPI', 'NEFT', 'RTGS'],
      railsFor: (info) => (info.vpa !== undefined ? ['UPI'] : ['NEFT', 'RTGS']),
      primary: ['accountNumber', 'vpa'],
      identity: ['vpa', 'ifsc', 'accountNumber'],
      anyOf: ['vpa', 'accountNumber'],
    },
  ),
  bank(
    'JMD',
    {
      accountNumber: req(accountNumber),
      branchCode: req(digits(5)),
      bankAccountType: req(bankAccountType),
      bankName: req(bankName),
    },
    {
      rails: ['BANK_TRANSFER'],
      primary: ['accountNumber'],
      identity: ['branchCode', 'accountNumber'],
      beneficiary: { require: ['address', 'phoneNumber'] },
    },
  ),
  mobileMoney('KES', '^\\+254[0-9]{9}$'),
  mobileMoney('MWK'),
  bank(
    'MXN',
    { clabeNumber: req({ ...digits(18), strict: { format: 'clabe' } }) },
    { rails: ['SPEI'], primary: ['clabeNumber'], identity: ['clabeNumber'] },
  ),
  swiftBank('MYR'),
  bank(
    'NGN',
    { accountNumber: req(digits(10)), bankName: req(bankName) },
    {
      rails: ['BANK_TRANSFER'],
      primary: ['accountNumber'],
      identity: ['bankName', 'accountNumber'],
    },
  ),
  bank(
    'PHP',
    { bankName: req(bankName), accountNumber: req(digits(8, 16)) },
    {
      rails: ['BANK_TRANSFER'],
      primary: ['accountNumber'],
      identity: ['bankName', 'accountNumber'],
    },
  ),
  bankOrPhone(
    'PKR',
    {
      bankName: req(bankName),
      accountNumber,
      iban: iban('^PK[0-9]{2}[A-Z]{4}[0-9]{16}$', 24),
      phoneNumber: phone(),
    },
    ['iban', 'accountNumber', 'phoneNumber'],
  ),
  mobileMoney('RWF', '^\\+250[0-9]{9}$'),
  swiftBank('SGD', false),
  // El Salvador's accounts hold US dollars.
  bank(
    'SLV',
    { bankName, accountNumber, bankAccountType, phoneNumber: phone() },
    {
      rails: ['BANK_TRANSFER', 'MOBILE_MONEY'],
      railsFor: bankOrMobile,
      currencies: ['USD'],
      primary: ['accountNumber', 'phoneNumber'],
      identity: ['accountNumber', 'phoneNumber'],
      anyOf: ['accountNumber', 'phoneNumber'],
    },
  ),
  swiftBank('THB'),
  mobileMoney('TZS', '^\\+255[0-9]{9}$'),
  mobileMoney('UGX'),
  bank(
    'USD',
    {
      accountNumber: req(accountNumber),
      routingNumber: req({ ...digits(9), strict: { format: 'aba-routing' } }),
      bankName: { minLength: 1, maxLength: 140 },
      bankAccountType,
      intermediaryBankName: { minLength: 1, maxLength: 140 },
      intermediaryRoutingNumber: { ...digits(9), strict: { format: 'aba-routing' } },
      fiToFiInformation: { maxLength: 210 },
    },
    {
      rails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
      primary: ['accountNumber'],
      identity: ['routingNumber', 'accountNumber'],
    },
  ),
  swiftBank('VND'),
  mobileMoney('XAF', undefined, {
    region: req({ pattern: '^[A-Z]{2}$', enum: ['CM', 'CG'], minLength: 2, maxLength: 2 }),
  }),
  mobileMoney('XOF', undefined, {
    region: req({ pattern: '^[A-Z]{2}$', enum: ['BJ', 'CI', 'SN', 'TG'], minLength: 2, maxLength: 2 }),
  }),
  bank(
    'ZAR',
    { accountNumber: req(digits(9, 13)), bankName: req(bankName) },
    {
      rails: ['BANK_TRANSFER'],
      primary: ['accountNumber'],
      identity: ['bankName', 'accountNumber'],
    },
  ),
  mobileMoney('ZMW', '^\\+260[0-9]{9}$'),
  {
    ...bank(
      'SWIFT',
      {
        country: req({ pattern: '^[A-Z]{2}$', minLength: 2, maxLength: 2 }),
        swiftCode: req(swiftCode),
        bankName: req(bankName),
        accountNumber,
        iban: iban('^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$'),
      },
      {
        rails: ['SWIFT'],
        primary: ['iban', 'accountNumber'],
        identity: ['swiftCode', 'iban', 'accountNumber'],
        anyOf: ['iban', 'accountNumber'],
      },
    ),
    currencies: 'ANY_FIAT',
  },
  wallet('BASE_WALLET', 'BaseWallet', EVM_ADDRESS, ['USDC', 'USDT'], 'lower'),
  wallet('ETHEREUM_WALLET', 'EthereumWallet', EVM_ADDRESS, ['USDC', 'USDT'], 'lower'),
  {
    accountType: 'LIGHTNING',
    kind: 'LIGHTNING',
    schemaPrefix: 'Lightning',
    currencies: ['BTC'],
    fields: {
      invoice: { strict: { format: 'bolt11' }, normalize: 'lower' },
      bolt12: { strict: { format: 'bolt12' }, normalize: 'lower' },
      lightningAddress: { strict: { format: 'lightning-address' }, normalize: 'lower' },
    },
    primary: ['lightningAddress', 'bolt12', 'invoice'],
    identity: ['lightningAddress', 'bolt12', 'invoice'],
    exactlyOne: ['invoice', 'bolt12', 'lightningAddress'],
  },
  wallet('POLYGON_WALLET', 'PolygonWallet', EVM_ADDRESS, ['USDC', 'USDT'], 'lower'),
  wallet('PLASMA_WALLET', 'PlasmaWallet', EVM_ADDRESS, ['USDT'], 'lower'),
  wallet('SOLANA_WALLET', 'SolanaWallet', { strict: { format: 'solana-address' } }, ['USDC', 'USDT']),
  wallet('SPARK_WALLET', 'SparkWallet', { format: 'spark-address' }, ['BTC', 'USDB'], 'lower'),
  wallet('TRON_WALLET', 'TronWallet', { strict: { format: 'tron-address' } }, ['USDT']),
];

const BY_TYPE = new Map(ACCOUNT_TYPES.map((def) => [def.accountType, def]));

export function accountTypeDef(accountType: string): AccountTypeDef | undefined {
  return BY_TYPE.get(accountType);
}

/** The value of the first identifier field present: the account's primary identifier. */
export function primaryIdentifier(def: AccountTypeDef, info: Record<string, unknown>): string {
  for (const field of def.primary) {
    const value = info[field];
    if (typeof value === 'string' && value !== '') return value;
  }
  return '';
}

function normalized(def: AccountTypeDef, field: string, value: unknown): string {
  const text = String(value ?? '').replace(/\s+/g, '');
  const mode = def.fields[field]?.normalize;
  return mode === 'upper' ? text.toUpperCase() : mode === 'lower' ? text.toLowerCase() : text;
}

/** A stable key for "the same account": its type and its normalized identifying fields. */
export function identityKey(def: AccountTypeDef, info: Record<string, unknown>): string {
  return [def.accountType, ...def.identity.map((field) => normalized(def, field, info[field]))].join('|');
}

export function paymentRailsFor(def: AccountTypeDef, info: Record<string, unknown>): string[] | undefined {
  if (def.paymentRails === undefined) return undefined;
  return def.railsFor ? def.railsFor(info) : [...def.paymentRails];
}
