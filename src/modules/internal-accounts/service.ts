// Internal accounts: the balances a platform and its customers hold with railyard. Each
// owner gets one account per currency the platform supports; balances are the ledger's.

import { createHash } from 'node:crypto';
import { iso } from '../../clock.js';
import { cryptoNetworksOf, currencyInfo, isFiat } from '../../currencies.js';
import type { Queryable } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { recordEvent, type EventInput } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import { apiError } from '../../http/errors.js';
import { newIdWhere } from '../../ids.js';
import { cardFundingBindingFor } from '../../rails/magic.js';
import {
  BalanceLimitExceeded,
  BALANCE_MAX,
  InsufficientFunds,
  openAccounts,
  openBooks,
  openFreshAccounts,
  type Books,
} from '../../ledger/index.js';
import { base58Encode } from '../../crypto/base58.js';
import { bech32Encode, clabeCheckDigit, ibanCheckDigits, toBech32Words } from '../external-accounts/formats.js';
import { readPlatformConfig, readPlatformConfigShared } from '../platform/config.js';
import type { InternalAccountType } from './schemas.js';
import * as store from './store.js';

export type { InternalAccountView } from './store.js';

// ----------------------------------------------------------------------------- provisioning

/**
 * The account type for a currency: fiat is INTERNAL_FIAT; USDB gives a customer an
 * EMBEDDED_WALLET (the self-custodial wallet the reference provisions when the platform
 * supports USDB); other crypto, and the platform's own USDB, is INTERNAL_CRYPTO.
 */
export function accountTypeFor(currency: string, customerId: string | null): InternalAccountType {
  if (isFiat(currency)) return 'INTERNAL_FIAT';
  if (currency === 'USDB' && customerId !== null) return 'EMBEDDED_WALLET';
  return 'INTERNAL_CRYPTO';
}

export interface ProvisionInput {
  platformId: string;
  /** null: the platform's own accounts. */
  customerId: string | null;
  now: Date;
  /**
   * The owner has no account yet, so there is nothing to look up and every row goes in one
   * statement per table: `owner` for a customer created in this transaction or a platform
   * whose accounts it deleted, `platform` for a platform created in it (whose system accounts
   * are new too).
   */
  fresh?: 'owner' | 'platform';
  /** The platform's supported currencies, when the caller has them (a platform it creates). */
  currencies?: string[];
}

/**
 * Gives the owner an internal account (with its ledger account) in every currency the
 * platform supports that it lacks. Runs in the caller's transaction; creating a customer
 * calls it in the transaction that creates the customer. Safe to repeat.
 */
export async function provisionInternalAccounts(tx: Queryable, input: ProvisionInput): Promise<string[]> {
  const currencies =
    input.currencies ??
    (await readPlatformConfigShared(tx, input.platformId)).supportedCurrencies.map((c) => c.currencyCode);
  return input.fresh === undefined ? provisionOwner(tx, input, currencies) : provisionFreshOwner(tx, input, currencies);
}

/**
 * Gives the platform and each customer in `customerIds` (its live customers: the caller
 * walks them, see activeCustomerIds) what provisionInternalAccounts gives a new owner, in
 * `currencies` (the platform's supported currencies). A configuration change that adds a
 * currency calls it in its own transaction, after writing the new configuration, with the
 * platform's row locked.
 */
export async function provisionEveryOwner(
  tx: Queryable,
  input: { platformId: string; now: Date; currencies: string[]; customerIds: AsyncIterable<string> },
): Promise<void> {
  const { platformId, now, currencies } = input;
  await provisionOwner(tx, { platformId, now, customerId: null }, currencies);
  for await (const customerId of input.customerIds) {
    await provisionOwner(tx, { platformId, now, customerId }, currencies);
  }
}

async function provisionOwner(tx: Queryable, input: ProvisionInput, currencies: string[]): Promise<string[]> {
  const existing = await store.ownerAccounts(tx, input.platformId, input.customerId);
  const created: string[] = [];
  const now = iso(input.now);
  for (const currencyCode of currencies) {
    const type = accountTypeFor(currencyCode, input.customerId);
    if (existing.some((a) => a.type === type && a.currency === currencyCode)) continue;
    const id = newAccountId();
    const inserted = await store.insertInternalAccount(tx, {
      id,
      platform_id: input.platformId,
      customer_id: input.customerId,
      owner_key: store.ownerKey(input.customerId),
      type,
      currency: currencyCode,
      status: 'ACTIVE',
      created_at: now,
      updated_at: now,
    });
    // A concurrent provisioning created it first; that one opened its ledger account.
    if (!inserted) continue;
    await openAccounts(tx, {
      platformId: input.platformId,
      internalAccountId: id,
      currency: currencyCode,
      now: input.now,
    });
    created.push(id);
  }
  return created;
}

/** provisionOwner for an owner without accounts: two statements, whatever the number of currencies. */
async function provisionFreshOwner(tx: Queryable, input: ProvisionInput, currencies: string[]): Promise<string[]> {
  const now = iso(input.now);
  const rows = currencies.map((currencyCode) => ({
    id: newAccountId(),
    platform_id: input.platformId,
    customer_id: input.customerId,
    owner_key: store.ownerKey(input.customerId),
    type: accountTypeFor(currencyCode, input.customerId),
    currency: currencyCode,
    status: 'ACTIVE',
    created_at: now,
    updated_at: now,
  }));
  await store.insertFreshAccounts(tx, rows);
  await openFreshAccounts(tx, {
    platformId: input.platformId,
    now: input.now,
    accounts: rows.map((row) => ({ internalAccountId: row.id, currency: row.currency })),
    newPlatform: input.fresh === 'platform',
  });
  return rows.map((row) => row.id);
}

/**
 * An id ending in a funding-binding suffix would make cards refuse the account by chance
 * (about 1 in 2,000): railyard never hands one out, so card issuing stays repeatable.
 */
function newAccountId(): string {
  return newIdWhere('InternalAccount', (candidate) => cardFundingBindingFor(candidate).kind === 'ELIGIBLE');
}

/** Provisions what the platform's current configuration calls for but is missing (currencies added later). */
async function ensurePlatformAccounts(ctx: Ctx): Promise<void> {
  const config = await readPlatformConfig(ctx.db.k, ctx.platformId);
  const existing = await store.ownerAccounts(ctx.db.k, ctx.platformId, null);
  const missing = config.supportedCurrencies.some(
    (c) => !existing.some((a) => a.currency === c.currencyCode && a.type === accountTypeFor(c.currencyCode, null)),
  );
  if (missing)
    await ctx.db.transaction((tx) =>
      provisionInternalAccounts(tx, { platformId: ctx.platformId, customerId: null, now: ctx.now }),
    );
}

// ----------------------------------------------------------------------------- presenting

export function currencyObject(code: string) {
  const info = currencyInfo(code);
  return info === undefined
    ? { code }
    : { code: info.code, name: info.name, symbol: info.symbol, decimals: info.decimals };
}

export function money(amount: bigint, currency: string) {
  // Amounts stay below BALANCE_MAX (9e15), which a JSON number carries exactly.
  return { amount: Number(amount), currency: currencyObject(currency) };
}

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/** Deterministic sandbox coordinates: the same account always shows the same details. */
function seedOf(accountId: string): Buffer {
  return createHash('sha256').update(`railyard-funding:${accountId}`).digest();
}

function digitsOf(seed: Buffer, count: number): string {
  return BigInt(`0x${seed.toString('hex')}`)
    .toString()
    .padStart(count, '0')
    .slice(-count);
}

/** A routing number that passes the ABA checksum; railyard's sandbox bank. */
const SANDBOX_ROUTING_NUMBER = '123456780';
const SANDBOX_BANK_NAME = 'Railyard Sandbox Bank';

/**
 * A sandbox deposit address for crypto, on the network named (else the currency's first, see
 * cryptoNetworksOf): well formed for its network, regtest or testnet where the network has
 * one, and never a real wallet. `amount` (smallest unit) goes into a Lightning invoice.
 */
function cryptoDepositInfo(
  accountId: string,
  currency: string,
  network: string | undefined,
  amount: bigint | undefined,
): Record<string, unknown> | undefined {
  const seed = seedOf(accountId);
  const networks = cryptoNetworksOf(currency);
  const chosen = network === undefined ? networks[0] : networks.find((n) => n.network === network);
  switch (chosen?.accountType) {
    case 'SOLANA_WALLET':
      return { accountType: 'SOLANA_WALLET', address: base58Encode(seed), assetType: currency };
    case 'TRON_WALLET': {
      const payload = Buffer.concat([Buffer.from([0x41]), seed.subarray(0, 20)]);
      const checksum = createHash('sha256')
        .update(createHash('sha256').update(payload).digest())
        .digest()
        .subarray(0, 4);
      return {
        accountType: 'TRON_WALLET',
        address: base58Encode(Buffer.concat([payload, checksum])),
        assetType: currency,
      };
    }
    case 'BASE_WALLET':
    case 'POLYGON_WALLET':
    case 'ETHEREUM_WALLET':
    case 'PLASMA_WALLET':
      return {
        accountType: chosen.accountType,
        address: `0x${seed.subarray(0, 20).toString('hex')}`,
        assetType: currency,
      };
    case 'SPARK_WALLET': {
      const data = [...seed, ...seedOf(`${accountId}:2`)]
        .slice(0, 56)
        .map((byte) => BECH32[byte % 32])
        .join('');
      return { accountType: 'SPARK_WALLET', address: `sparkrt1${data}`, assetType: currency };
    }
    case 'LIGHTNING': {
      // A regtest invoice for the amount (BOLT 11 counts in tenths of a satoshi with `n`); its
      // body is the seed, not a signed invoice: no Lightning node can pay it.
      const hrp = `lnbcrt${amount === undefined ? '' : `${amount * 10n}n`}`;
      return {
        accountType: 'LIGHTNING',
        invoice: bech32Encode(hrp, toBech32Words(Buffer.concat([seed, seedOf(`${accountId}:2`)]))),
      };
    }
    case 'BITCOIN_L1':
      // A regtest pay-to-witness-key-hash address (bcrt1q…).
      return {
        accountType: 'BITCOIN_L1',
        address: bech32Encode('bcrt', [0, ...toBech32Words(seed.subarray(0, 20))]),
        network: 'BITCOIN',
      };
    default:
      return undefined;
  }
}

/**
 * Deterministic sandbox coordinates to pay into, for an account or any other payee id (a
 * quote). For crypto, `network` picks the deposit network (default: the currency's first).
 */
export function fundingInfo(
  accountId: string,
  currency: string,
  options: { network?: string | undefined; amount?: bigint } = {},
): Record<string, unknown> {
  const crypto = cryptoDepositInfo(accountId, currency, options.network, options.amount);
  if (crypto !== undefined) return crypto;
  const seed = seedOf(accountId);
  const reference = `RY-${seed.toString('hex').slice(0, 10).toUpperCase()}`;
  switch (currency) {
    case 'USD':
      return {
        accountType: 'USD_ACCOUNT',
        accountNumber: digitsOf(seed, 12),
        routingNumber: SANDBOX_ROUTING_NUMBER,
        bankName: SANDBOX_BANK_NAME,
        paymentRails: ['ACH', 'WIRE'],
        reference,
      };
    case 'EUR': {
      const bban = digitsOf(seed, 18);
      return {
        accountType: 'EUR_ACCOUNT',
        iban: `DE${ibanCheckDigits('DE', bban)}${bban}`,
        swiftCode: 'RLYDDEFF',
        paymentRails: ['SEPA', 'SEPA_INSTANT'],
        reference,
      };
    }
    case 'GBP':
      return {
        accountType: 'GBP_ACCOUNT',
        sortCode: '608371',
        accountNumber: digitsOf(seed, 8),
        paymentRails: ['FASTER_PAYMENTS'],
        reference,
      };
    case 'MXN': {
      const first17 = digitsOf(seed, 17);
      return {
        accountType: 'MXN_ACCOUNT',
        clabeNumber: `${first17}${clabeCheckDigit(first17)}`,
        paymentRails: ['SPEI'],
        reference,
      };
    }
    default:
      return {
        accountType: 'SWIFT_ACCOUNT',
        country: 'US',
        swiftCode: 'RLYDUS33',
        bankName: SANDBOX_BANK_NAME,
        accountNumber: digitsOf(seed, 12),
        accountHolderName: 'Railyard Sandbox Client Funds',
        paymentRails: ['SWIFT'],
        reference,
      };
  }
}

// Instructions never change for an account; computing them hashes, so keep recent ones.
const instructionsCacheMax = 10_000;
const instructionsCache = new Map<string, ReturnType<typeof buildFundingInstructions>>();

function fundingInstructions(row: store.InternalAccountRow) {
  let instructions = instructionsCache.get(row.id);
  if (instructions === undefined) {
    if (instructionsCache.size >= instructionsCacheMax) instructionsCache.clear();
    instructions = buildFundingInstructions(row);
    instructionsCache.set(row.id, instructions);
  }
  return instructions;
}

function buildFundingInstructions(row: store.InternalAccountRow) {
  const info = fundingInfo(row.id, row.currency);
  const bank = 'reference' in info;
  return [
    {
      instructionsNotes: bank
        ? `Sandbox coordinates: nothing real settles here. Quote the reference ${String(info.reference)} with a deposit, or add funds with POST /sandbox/internal-accounts/${row.id}/fund.`
        : `Sandbox address on a test network: nothing real settles here. Add funds with POST /sandbox/internal-accounts/${row.id}/fund.`,
      isPlatformAccount: row.customer_id === null,
      accountOrWalletInfo: info,
    },
  ];
}

export function presentInternalAccount(row: store.InternalAccountView) {
  const available = BigInt(row.available);
  const held = BigInt(row.held);
  return {
    id: row.id,
    // Absent fields are undefined values, which JSON leaves out (see presentTransaction).
    customerId: row.customer_id ?? undefined,
    type: row.type as InternalAccountType,
    status: row.status as 'ACTIVE',
    balance: money(available, row.currency),
    totalBalance: money(available + held, row.currency),
    fundingPaymentInstructions: fundingInstructions(row),
    privateEnabled: row.type === 'EMBEDDED_WALLET' ? Number(row.private_enabled ?? 0) === 1 : undefined,
    createdAt: row.created_at,
    // biome-ignore lint/complexity/useMathMinMax: ISO timestamps, compared as text
    updatedAt: row.balance_updated_at > row.updated_at ? row.balance_updated_at : row.updated_at,
  };
}

export type InternalAccountPresentation = ReturnType<typeof presentInternalAccount>;

// ----------------------------------------------------------------------------- operations

export async function listCustomerInternalAccounts(
  ctx: Ctx,
  query: { currency?: string | undefined; customerId?: string | undefined; type?: string | undefined } & PageRequest,
) {
  return toPage(await store.listCustomerAccounts(ctx.db.k, ctx.platformId, query, query), presentInternalAccount);
}

export async function listPlatformInternalAccounts(
  ctx: Ctx,
  query: { currency?: string | undefined; type?: string | undefined },
) {
  await ensurePlatformAccounts(ctx);
  return { data: (await store.listPlatformAccounts(ctx.db.k, ctx.platformId, query)).map(presentInternalAccount) };
}

function accountNotFound(id: string) {
  return apiError('REFERENCE_NOT_FOUND', `No internal account ${id}`);
}

/** An internal account of the platform (any owner) with its balances, read in the caller's transaction. */
export async function findInternalAccount(
  q: Queryable,
  platformId: string,
  id: string,
): Promise<store.InternalAccountView | undefined> {
  return store.findInternalAccount(q, platformId, id);
}

/** The read of findInternalAccount, for a command's prefetched reads (db/prefetch.ts). */
export function internalAccountRead(platformId: string, id: string) {
  return store.internalAccountRead(platformId, id);
}

/** Turns an EMBEDDED_WALLET's privacy on or off (the caller checked the type and the signature). */
export async function setWalletPrivacy(tx: Queryable, platformId: string, id: string, enabled: boolean, now: Date) {
  await store.setPrivateEnabled(tx, platformId, id, enabled, iso(now));
}

/** Every internal account of the owner (`customerId` null: the platform's own), without balances. */
export async function ownerInternalAccounts(
  q: Queryable,
  platformId: string,
  customerId: string | null,
): Promise<store.InternalAccountRow[]> {
  return store.ownerAccounts(q, platformId, customerId);
}

/** The owner's internal account in `currency`: the one a payment to that owner in that currency credits. */
export async function findOwnerAccountIn(
  q: Queryable,
  platformId: string,
  customerId: string | null,
  currency: string,
): Promise<store.InternalAccountRow | undefined> {
  const type = accountTypeFor(currency, customerId);
  return (await store.ownerAccounts(q, platformId, customerId)).find((a) => a.currency === currency && a.type === type);
}

/**
 * Writes the books (see Books.flush) and records INTERNAL_ACCOUNT.BALANCE_UPDATED, with the
 * account as it is now, for each account whose balances changed; into `sink` when given
 * (the caller records them with its other events), else at once. An account in `known` (read
 * earlier in this transaction) is shown with the books' balances instead of being read again.
 */
export async function recordBalanceUpdates(
  tx: Queryable,
  platformId: string,
  books: Books,
  now: Date,
  sink?: EventInput[],
  known: readonly store.InternalAccountView[] = [],
): Promise<void> {
  await books.flush();
  for (const id of books.changedAccounts()) {
    const account =
      withBalance(
        known.find((a) => a.id === id),
        books,
        now,
      ) ?? (await store.findInternalAccount(tx, platformId, id));
    if (account === undefined) throw new Error(`internal account ${id} vanished`);
    const event: EventInput = {
      platformId,
      type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      resourceId: id,
      data: presentInternalAccount(account),
      now,
    };
    if (sink) sink.push(event);
    else await recordEvent(tx, event);
  }
}

/** `account` with the balances the books wrote for it at `now`. */
function withBalance(
  account: store.InternalAccountView | undefined,
  books: Books,
  now: Date,
): store.InternalAccountView | undefined {
  const balance = account && books.balanceOf(account.id);
  if (account === undefined || balance === undefined) return undefined;
  return {
    ...account,
    available: balance.available.toString(),
    held: balance.held.toString(),
    balance_updated_at: iso(now),
  };
}

/**
 * The 400 INVALID_AMOUNT a ledger refusal answers (funds that do not cover the payment, or a
 * credit past the balance maximum); any other error as it is. `field` is the request field
 * that set the amount.
 */
export function ledgerRefusal(err: unknown, field: string): unknown {
  if (err instanceof InsufficientFunds) {
    return apiError(
      'INVALID_AMOUNT',
      `Insufficient funds: the available balance of ${err.accountId} is ${err.available}`,
      {
        reason: 'INSUFFICIENT_BALANCE',
        availableBalance: Number(err.available),
        errors: [{ field, message: `exceeds the available balance of ${err.available}` }],
      },
    );
  }
  if (err instanceof BalanceLimitExceeded) {
    return apiError(
      'INVALID_AMOUNT',
      `This payment would take the balance of ${err.accountId} past the maximum of ${BALANCE_MAX}`,
      {
        errors: [{ field, message: `would take the balance of ${err.accountId} past ${BALANCE_MAX}` }],
      },
    );
  }
  return err;
}

/** Sandbox deposit: adds `amount` to the account's available balance at once. */
export async function sandboxFundInternalAccount(ctx: Ctx, accountId: string, amount: number) {
  return ctx.db.transaction(async (tx) => {
    const account = await store.findInternalAccount(tx, ctx.platformId, accountId);
    if (account === undefined) throw accountNotFound(accountId);
    if (account.status !== 'ACTIVE') {
      throw apiError('INVALID_INPUT', `Internal account ${accountId} is ${account.status} and cannot receive funds`, {
        errors: [{ field: 'accountId', message: `is ${account.status}` }],
      });
    }
    const books = openBooks(tx, ctx.platformId, ctx.now);
    try {
      await books.fund(account.id, account.currency, BigInt(amount));
      // The balance is written here: a deposit that meanwhile no longer fits is refused here.
      await recordBalanceUpdates(tx, ctx.platformId, books, ctx.now, undefined, [account]);
    } catch (err) {
      throw ledgerRefusal(err, 'amount');
    }
    // The account as read, with the balances the books wrote.
    return presentInternalAccount(withBalance(account, books, ctx.now)!);
  });
}
