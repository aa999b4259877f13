// What the suites in this folder expect of the reference's examples, written down apart from
// railyard's code so that a change in railyard's behaviour shows as a failure:
// - REFERENCE_BREAKS: examples the reference itself contradicts (its schema or a rule its
//   prose states), each with the nearest valid value the suites send instead;
// - STRICT_REFUSALS: the example values a strict-identifiers platform refuses, with the rule
//   each breaks, checked by this file's own implementation of the rules (strictFindings);
// - MAGIC_EXAMPLES: example values that end in a sandbox magic suffix.

import { createHash } from 'node:crypto';
import {
  BENEFICIAL_OWNER_KYC,
  BENEFICIARY_VERIFICATION,
  BUSINESS_KYB,
  CARD_DECISIONS,
  CARD_FUNDING_BINDING,
  CARD_ISSUANCE,
  INDIVIDUAL_KYC,
  PULL_SOURCE_SCENARIOS,
  QUOTE_EXECUTION_SCENARIOS,
  scenarioSuffix,
  SPARK_QUOTE_EXECUTION_SCENARIOS,
  STABLECOIN_OPERATIONS,
  STABLECOIN_PROVIDER_LINKS,
  STABLECOIN_REGISTRATIONS,
  TRANSFER_SCENARIOS,
} from '../../src/rails/magic.js';

// ------------------------------------------------------------------ where the reference breaks itself

export interface ReferenceBreak {
  /** The operation (or schema) whose example it is. */
  where: string;
  field: string;
  /** What the reference gives. */
  example: string;
  /** What of the reference it breaks. */
  problem: string;
  /** What the suites send instead. */
  sent: string;
}

/**
 * Every built and named body passes the reference's JSON schema (the suites check each with
 * the fuzz suite's validator, which reads the reference on its own); these break a rule the
 * reference states in its prose, or assume a context the sandbox does not give.
 */
export const REFERENCE_BREAKS: readonly ReferenceBreak[] = [
  {
    where: 'LightningInfo',
    field: 'accountInfo.invoice, accountInfo.bolt12, accountInfo.lightningAddress',
    example: 'an example for each of the three',
    problem: 'the schema says exactly one of the three must be given; merged, the examples give all three',
    sent: 'three bodies, one field each',
  },
  {
    where: 'LightningInfo',
    field: 'accountInfo.bolt12',
    example: 'lnbc15u1p3xnhl2pp5… (the invoice example again)',
    problem: 'described as a BOLT 12 offer, it is a BOLT 11 invoice; the schema (a plain string) takes it',
    sent: 'the example as it is: accepted by default, refused in strict mode (STRICT_REFUSALS)',
  },
  {
    where: 'createQuote, named example realTimeFundingToSparkWallet',
    field: 'immediatelyExecute',
    example: 'true',
    problem:
      'immediatelyExecute is stated to work only for an internal-account or pull source; this source is REALTIME_FUNDING',
    sent: 'false',
  },
  {
    where: 'createCard (property examples)',
    field: 'threeDSecurePassword',
    example: 'AbCd1234EfGh5678',
    problem:
      'stated to be taken only by card programs whose issuer has a static password (EU cards); the sandbox program has none',
    sent: 'the body without it',
  },
  {
    where: 'createStablecoinMint, createStablecoinBurn',
    field: 'fundingSource.type GRID_INTERNAL_ACCOUNT and PROVIDER_INTERNAL_BALANCE; source.type GRID_INTERNAL_ACCOUNT',
    example: 'the variants themselves',
    problem: 'each is stated to be reserved for a later flow',
    sent: 'not sent: the other variants are',
  },
  {
    where: 'createQuote, named example accountToUma',
    field: 'senderCustomerInfo',
    example: 'absent',
    problem:
      "the sandbox's UMA receivers list FULL_NAME in requiredPayerDataFields, and the reference says such fields must be given",
    sent: 'senderCustomerInfo from the property example of QuoteRequest.senderCustomerInfo',
  },
  {
    where: 'createCustomerExternalAccount, createPlatformExternalAccount (property examples)',
    field: 'currency',
    example: 'USD',
    problem: "fits USD accounts only; each account type holds its own currency (the type's name says which)",
    sent: 'the currency of the account type (accountCurrency)',
  },
  {
    where: 'updateCardById, named example updateFundingSources and the built body',
    field: 'fundingSources',
    example: 'two internal accounts',
    problem:
      "each must hold the card's currency (stated); the sandbox gives a customer one internal account per currency",
    sent: 'the first one only (the named example freezeAndUpdateSources sends one as well)',
  },
];

/** The variants the reference reserves for a later flow (REFERENCE_BREAKS), by operation and union. */
export const RESERVED_VARIANTS: Readonly<Record<string, Record<string, string[]>>> = {
  createStablecoinMint: { fundingSource: ['GRID_INTERNAL_ACCOUNT', 'PROVIDER_INTERNAL_BALANCE'] },
  createStablecoinBurn: { source: ['GRID_INTERNAL_ACCOUNT'] },
};

/**
 * Named examples the reference gives of requests it refuses: the suites expect the refusal.
 * `combinedContactUpdateRejected` changes email and phoneNumber at once, which the reference
 * refuses when they are a wallet's logins (railyard: when either changes an embedded wallet's
 * OTP credential; every customer with an email has one).
 */
export const REFUSED_EXAMPLES: Readonly<Record<string, { status: number; fields: string[] }>> = {
  'updateCustomerById named combinedContactUpdateRejected': { status: 400, fields: ['email', 'phoneNumber'] },
};

/**
 * The currency an account of each type holds: the first three letters of its type for the
 * fiat accounts; El Salvador's accounts (SLV) hold US dollars, SWIFT accounts any fiat (the
 * example's USD), wallets the coins of their network.
 */
export function accountCurrency(accountType: string): string {
  const special: Record<string, string> = {
    SLV_ACCOUNT: 'USD',
    SWIFT_ACCOUNT: 'USD',
    BASE_WALLET: 'USDC',
    ETHEREUM_WALLET: 'USDC',
    POLYGON_WALLET: 'USDC',
    SOLANA_WALLET: 'USDC',
    PLASMA_WALLET: 'USDT',
    TRON_WALLET: 'USDT',
    SPARK_WALLET: 'BTC',
    LIGHTNING: 'BTC',
  };
  return special[accountType] ?? accountType.slice(0, 3);
}

// ------------------------------------------------------------------ strict identifiers

export interface StrictRefusal {
  field: string;
  value: string;
  rule: string;
}

/**
 * The example values a platform in strict mode refuses, across every body the suites send
 * (operations in `where`). The suites check that strictFindings finds exactly these, and that
 * railyard's 400 names exactly their fields, each message ending `(strict identifiers)`.
 */
export type Area = 'external-accounts' | 'customers' | 'money' | 'stablecoins';

export const STRICT_REFUSALS: readonly (StrictRefusal & { area: Area; where: string })[] = [
  {
    area: 'external-accounts',
    where: 'DKK_ACCOUNT',
    field: 'accountInfo.iban',
    value: 'DK5000400040116243',
    rule: 'IBAN check digits (mod 97)',
  },
  {
    area: 'external-accounts',
    where: 'MXN_ACCOUNT',
    field: 'accountInfo.clabeNumber',
    value: '123456789012345678',
    rule: 'CLABE check digit',
  },
  {
    area: 'external-accounts',
    where: 'LIGHTNING (its bolt12 body)',
    field: 'accountInfo.bolt12',
    value:
      'lnbc15u1p3xnhl2pp5jptserfk3zk4qy42tlucycrfwxhydvlemu9pqr93tuzlv9cc7g3sdqsvfhkcap3xyhx7un8cqzpgxqzjcsp5f8c52y2stc300gl6s4xswtjpc37hrnnr3c9wvtgjfuvqmpm35evq9qyyssqy4lgd8tj637qcjp05rdpxxykjenthxftej7a2zzmwrmrl70fyj9hvj0rewhzj7jfyuwkwcg9g2jpwtk3wkjtwnkdks84hsnu8xps5vsq4gj5hs',
    rule: 'BOLT 12 offer (lno1…)',
  },
  {
    area: 'external-accounts',
    where: 'named example usBankAccount of both creates',
    field: 'accountInfo.routingNumber',
    value: '123456789',
    rule: 'ABA routing checksum',
  },
];

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(text: string): Buffer | undefined {
  let n = 0n;
  for (const c of text) {
    const d = BASE58.indexOf(c);
    if (d < 0) return undefined;
    n = n * 58n + BigInt(d);
  }
  const hex = n === 0n ? '' : n.toString(16);
  const body = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  const zeros = text.length - text.replace(/^1+/, '').length;
  return Buffer.concat([Buffer.alloc(zeros), body]);
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

/** The strict rules, implemented here from their definitions (not from railyard's code). */
const RULES: {
  rule: string;
  applies: (path: string, body: any, operationId: string) => boolean;
  ok: (value: string) => boolean;
}[] = [
  {
    rule: 'IBAN check digits (mod 97)',
    applies: (path) => /(^|\.)iban$/.test(path),
    ok: (v) => {
      const digits = [...(v.slice(4) + v.slice(0, 4))].map((c) => parseInt(c, 36)).join('');
      return BigInt(digits) % 97n === 1n;
    },
  },
  {
    rule: 'CLABE check digit',
    applies: (path) => path === 'accountInfo.clabeNumber',
    ok: (v) => {
      const sum = [...v.slice(0, 17)].reduce((s, d, i) => s + ((Number(d) * [3, 7, 1][i % 3]!) % 10), 0);
      return (10 - (sum % 10)) % 10 === Number(v[17]);
    },
  },
  {
    rule: 'ABA routing checksum',
    applies: (path) => /^accountInfo\.(intermediaryRoutingNumber|routingNumber)$/.test(path),
    ok: (v) => [...v].reduce((s, d, i) => s + Number(d) * [3, 7, 1][i % 3]!, 0) % 10 === 0,
  },
  { rule: 'BOLT 12 offer (lno1…)', applies: (path) => path === 'accountInfo.bolt12', ok: (v) => /^lno1/i.test(v) },
  {
    rule: 'BOLT 11 invoice (ln + network)',
    applies: (path) => path === 'accountInfo.invoice',
    ok: (v) => /^ln(bc|tb|bcrt|tbs)[0-9]*[a-z0-9]+$/i.test(v),
  },
  {
    rule: 'lightning address (user@domain)',
    applies: (path) => path === 'accountInfo.lightningAddress',
    ok: (v) => /^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$/.test(v),
  },
  {
    rule: 'EVM address (0x + 40 hex)',
    applies: (path, body, op) =>
      (path === 'accountInfo.address' &&
        /^(BASE|ETHEREUM|POLYGON|PLASMA)_WALLET$/.test(body.accountInfo?.accountType)) ||
      (op === 'estimateCryptoWithdrawalFee' &&
        path === 'destinationAddress' &&
        /^(ETHEREUM|BASE|POLYGON)$/.test(body.cryptoNetwork)),
    ok: (v) => /^0x[0-9a-f]{40}$/i.test(v),
  },
  {
    rule: 'Solana address (base58, 32 bytes)',
    applies: (path, body, op) =>
      (path === 'accountInfo.address' && body.accountInfo?.accountType === 'SOLANA_WALLET') ||
      (op === 'estimateCryptoWithdrawalFee' && path === 'destinationAddress' && body.cryptoNetwork === 'SOLANA'),
    ok: (v) => base58(v)?.length === 32,
  },
  {
    rule: 'Tron address (base58check, 0x41)',
    applies: (path, body, op) =>
      (path === 'accountInfo.address' && body.accountInfo?.accountType === 'TRON_WALLET') ||
      (op === 'estimateCryptoWithdrawalFee' && path === 'destinationAddress' && body.cryptoNetwork === 'TRON'),
    ok: (v) => {
      const bytes = base58(v);
      if (bytes?.length !== 25 || bytes[0] !== 0x41) return false;
      return sha256(sha256(bytes.subarray(0, 21)))
        .subarray(0, 4)
        .equals(bytes.subarray(21));
    },
  },
  {
    rule: 'SSN/ITIN written ###-##-####',
    applies: (path, body, op) =>
      /^(createCustomer|updateCustomerById)$/.test(op) &&
      /^(identifier|taxIdentifier)$/.test(path) &&
      ['SSN', 'ITIN'].includes(body.idType ?? body.taxIdType),
    ok: (v) => /^[0-9]{3}-[0-9]{2}-[0-9]{4}$/.test(v),
  },
  {
    rule: 'Spark token identifier (btkn…1 + bech32)',
    applies: (path, _body, op) => op === 'registerStablecoin' && path === 'networkTokenIdentifier',
    ok: (v) => /^btkn(rt|t|s)?1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]+$/.test(v),
  },
];

/** Every string in a body, with its path (`a.b[0].c`). */
export function leaves(body: unknown, path = ''): { path: string; value: string }[] {
  if (typeof body === 'string') return [{ path, value: body }];
  if (Array.isArray(body)) return body.flatMap((item, i) => leaves(item, `${path}[${i}]`));
  if (body !== null && typeof body === 'object')
    return Object.entries(body).flatMap(([k, v]) => leaves(v, path === '' ? k : `${path}.${k}`));
  return [];
}

/** The values of `body` a strict rule refuses, by this file's own rules. */
export function strictFindings(operationId: string, body: unknown): StrictRefusal[] {
  const found: StrictRefusal[] = [];
  for (const { path, value } of leaves(body)) {
    for (const rule of RULES)
      if (rule.applies(path, body, operationId) && !rule.ok(value)) found.push({ field: path, value, rule: rule.rule });
  }
  return found;
}

/** How many example values each rule read (a rule that read nothing proves nothing). */
export function strictRulesRead(cases: { operationId: string; body: unknown }[]): Record<string, number> {
  const read: Record<string, number> = Object.fromEntries(RULES.map((r) => [r.rule, 0]));
  for (const { operationId, body } of cases)
    for (const { path } of leaves(body))
      for (const rule of RULES) if (rule.applies(path, body, operationId)) read[rule.rule]! += 1;
  return read;
}

// ------------------------------------------------------------------ sandbox magic values

/** Every suffix a magic table of the sandbox reads. */
export const MAGIC_SUFFIXES: ReadonlySet<string> = new Set(
  [
    BENEFICIARY_VERIFICATION,
    INDIVIDUAL_KYC,
    BUSINESS_KYB,
    BENEFICIAL_OWNER_KYC,
    TRANSFER_SCENARIOS,
    QUOTE_EXECUTION_SCENARIOS,
    SPARK_QUOTE_EXECUTION_SCENARIOS,
    PULL_SOURCE_SCENARIOS,
    CARD_ISSUANCE,
    CARD_FUNDING_BINDING,
    CARD_DECISIONS,
    STABLECOIN_PROVIDER_LINKS,
    STABLECOIN_REGISTRATIONS,
    STABLECOIN_OPERATIONS,
  ].flatMap((table) => table.map((row: { suffix: string }) => row.suffix)),
);

/**
 * Example values that end in a magic suffix (the last three characters, before any `@`), and
 * what the sandbox does with them. A create still answers 2xx; the suites assert the outcome
 * where the operation they send reads the value.
 */
export const MAGIC_EXAMPLES: Readonly<Record<string, { area: Area; note: string }>> = {
  'card-emp-aary-001': {
    area: 'money',
    note: 'createCard platformCardId: issuance suffix 001, the card stays PROCESSING (asserted)',
  },
  'AMAZON RETAIL US-002': {
    area: 'money',
    note: 'card authorization merchant.descriptor: decision suffix 002, declined INSUFFICIENT_FUNDS (asserted)',
  },
  EG380019000500000000263180002: {
    area: 'external-accounts',
    note: "EGP_ACCOUNT iban, the account's primary identifier: creation is unaffected (beneficiary verification reads 102 to 107); a transfer to it would fail at once, a quote paying it would fail",
  },
};

/** The entries of a list that belong to `area`, as sorted keys. */
export function ofArea<T extends { area: Area }>(
  entries: Record<string, T> | readonly T[],
  area: Area,
  key: (entry: T, name: string) => string,
): string[] {
  const list = Array.isArray(entries) ? entries.map((e, i) => [String(i), e] as const) : Object.entries(entries);
  return list
    .filter(([, e]) => e.area === area)
    .map(([name, e]) => key(e, name))
    .sort();
}

/**
 * The members a magic table reads: an external account's identifiers (its primary one is
 * among them), a customer's name or registration number, an owner's last name, a card's
 * platformCardId and a merchant's descriptor, a provider link's client id and a
 * registration's token identifier. Ids are left out: the suites replace them.
 */
const MAGIC_READ = new Set([
  'iban',
  'accountNumber',
  'clabeNumber',
  'phoneNumber',
  'pixKey',
  'vpa',
  'address',
  'invoice',
  'bolt12',
  'lightningAddress',
  'fullName',
  'registrationNumber',
  'lastName',
  'platformCardId',
  'descriptor',
  'apiClientId',
  'providerTokenIdentifier',
]);

/** The example values in `bodies`, at members a magic table reads, that end in a magic suffix. */
export function magicValues(bodies: unknown[]): Set<string> {
  const found = new Set<string>();
  for (const body of bodies)
    for (const { path, value } of leaves(body))
      if (MAGIC_READ.has(path.split('.').at(-1)!) && MAGIC_SUFFIXES.has(scenarioSuffix(value))) found.add(value);
  return found;
}
