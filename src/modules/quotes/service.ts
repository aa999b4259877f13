// Cross-currency quotes: a locked offer to convert and pay, and its execution.
//
// A quote is written with its transaction (modules/transactions), which holds the status
// the two share: PENDING (or PENDING_AUTHORIZATION for a real-time-funded quote of a
// customer in an SCA region) until it is executed, funded or expires. Creation checks, in
// order, and changes nothing when one fails:
//   1. the request's shape and the combinations it may not use (400 INVALID_INPUT, all at once)
//   2. the source and destination exist and can be used (400 INVALID_INPUT naming the field;
//      createQuote declares no 404), the receiver lookup matches and the sender information
//      it asked for is there
//   3. the currencies: two different ones, both quoted (400 INVALID_CURRENCY)
//   4. the amounts: fees covered, limits of the platform and the receiver (400 AMOUNT_OUT_OF_RANGE,
//      TRANSACTION_SIZE_LIMIT_EXCEEDED)
// Rates and fees come from src/rates; execution outcomes from the sandbox rail.
//
// Strong Customer Authentication (customers whose address is in the EU or EEA): a
// real-time-funded quote starts in PENDING_AUTHORIZATION and authorizing it releases its
// payment instructions; executing an account-funded quote moves it to
// PENDING_AUTHORIZATION instead of paying, and authorizing it pays.

import { iso } from '../../clock.js';
import { cryptoNetworkRequired, cryptoNetworksOf, currencyInfo } from '../../currencies.js';
import type { Queryable, Tx } from '../../db/index.js';
import { runCommand, type Reply } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { ApiError, apiError, FieldErrors, invalidInput, type FieldError } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { defineJob } from '../../jobs/queue.js';
import { plainObject } from '../../json.js';
import { openSystemAccounts } from '../../ledger/index.js';
import { checkQuoteSignature, quotePayloadToSign } from '../wallet-auth/actions.js';
import { railFor, type QuotePayout } from '../../rails/index.js';
import {
  AMOUNT_MAX,
  ConversionOutOfRange,
  convertReceiving,
  convertSending,
  customerRate,
  decimalToNumber,
  decimalToString,
  feesFor,
  GRID_VARIABLE_FEE_BPS,
  gridFixedFee,
  hasRate,
  parseDecimal,
  ratedCurrencies,
  rateUpdatedAt,
  unitsPerUsd,
  type Conversion,
  type FeeSchedule,
} from '../../rates/index.js';
import { parseUmaAddress, pullSourceScenarioFor, SCA_SANDBOX_CODE } from '../../sandbox/magic.js';
import { customerNamedBy, customerProfile, findCustomerRow, type CustomerRow } from '../customers/service.js';
import { ACCOUNT_TYPES } from '../external-accounts/account-types.js';
import {
  findTransferCounterparty,
  requireActiveCounterparty,
  type TransferCounterparty,
} from '../external-accounts/service.js';
import {
  currencyObject,
  findInternalAccount,
  findOwnerAccountIn,
  fundingInfo,
  ledgerRefusal,
  type InternalAccountView,
} from '../internal-accounts/service.js';
import { readPlatformConfig, type StoredConfig } from '../platform/service.js';
import { findReceiverLookup, type ReceiverLookup } from '../receivers/service.js';
import {
  executeQuoteTransaction,
  expireQuoteTransaction,
  lockQuoteTransaction,
  moveQuoteAuthorization,
  openQuoteTransaction,
  platformCustomerIdOf,
  presentTransaction,
  suspenseAccountId,
  type Conversion as TransactionConversion,
  type TransactionRow,
} from '../transactions/service.js';
import * as store from './store.js';

// ----------------------------------------------------------------------------- constants

/** Quote lifetimes: instant rails (Lightning, Spark, fast stablecoin networks, RTP, SEPA Instant, UMA) and the rest. */
export const INSTANT_QUOTE_TTL_MS = 5 * 60 * 1000;
export const STANDARD_QUOTE_TTL_MS = 15 * 60 * 1000;
const INSTANT_RAILS = new Set(['RTP', 'SEPA_INSTANT', 'FEDNOW']);
const INSTANT_WALLETS = new Set(['SPARK_WALLET', 'LIGHTNING', 'SOLANA_WALLET', 'BASE_WALLET', 'POLYGON_WALLET']);

/** How long an SCA challenge may be answered. */
export const SCA_CHALLENGE_TTL_MS = 10 * 60 * 1000;

/** Countries of the EU and the EEA: customers with an address there authorize real-time-funded payments (SCA). */
const SCA_COUNTRIES = new Set([
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
  'IS',
  'LI',
  'NO',
]);

/** The network a real-time-funded quote is paid on, when one was named. */
function realtimeNetwork(input: QuoteInput): string | undefined {
  return input.source.sourceType === 'REALTIME_FUNDING' ? input.source.cryptoNetwork : undefined;
}

/** Receiving currencies whose corridors ask why the money moves. */
const PURPOSE_REQUIRED_CURRENCIES = new Set(['INR']);

// ----------------------------------------------------------------------------- input

interface AccountSourceInput {
  sourceType: 'ACCOUNT';
  accountId: string;
  customerId?: string | undefined;
}
interface RealtimeSourceInput {
  sourceType: 'REALTIME_FUNDING';
  customerId?: string | undefined;
  currency: string;
  cryptoNetwork?: string | undefined;
}
interface AccountDestinationInput {
  destinationType: 'ACCOUNT';
  accountId: string;
  paymentRail?: string | undefined;
}
interface UmaDestinationInput {
  destinationType: 'UMA_ADDRESS';
  umaAddress: string;
  currency?: string | undefined;
}

export interface QuoteInput {
  lookupId?: string | undefined;
  source: AccountSourceInput | RealtimeSourceInput;
  destination: AccountDestinationInput | UmaDestinationInput;
  lockedCurrencySide: 'SENDING' | 'RECEIVING';
  lockedCurrencyAmount: number;
  immediatelyExecute?: boolean | undefined;
  description?: string | undefined;
  remittanceInformation?: string | undefined;
  purposeOfPayment?: string | undefined;
  platformFeeOverride?:
    | { platformFixedFee: { amount: number; currency: string }; platformVariableFeeBps: number }
    | undefined;
  scaFactor?: string | undefined;
  senderCustomerInfo?: Record<string, unknown> | undefined;
}

// ----------------------------------------------------------------------------- presenting

interface ScaChallengeView {
  id: string;
  expiresAt: string;
  factor: string;
  availableFactors: string[];
  purpose: string;
}

function parseJson<T>(text: string | null): T | undefined {
  return text === null ? undefined : (JSON.parse(text) as T);
}

export function presentQuote(row: store.QuoteRow) {
  const instructions = parseJson<unknown[]>(row.payment_instructions);
  const challenge = parseJson<ScaChallengeView>(row.sca_challenge);
  return {
    id: row.id,
    status: row.status as 'PENDING',
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    source: JSON.parse(row.source) as Record<string, unknown>,
    destination: JSON.parse(row.destination) as Record<string, unknown>,
    sendingCurrency: currencyObject(row.sending_currency),
    receivingCurrency: currencyObject(row.receiving_currency),
    totalSendingAmount: Number(row.sending_amount),
    totalReceivingAmount: Number(row.receiving_amount),
    exchangeRate: decimalToNumber(parseDecimal(row.exchange_rate)),
    feesIncluded: Number(row.fees),
    platformFeesIncluded: Number(row.platform_fees),
    ...(instructions !== undefined ? { paymentInstructions: instructions } : {}),
    transactionId: row.transaction_id,
    rateDetails: JSON.parse(row.rate_details) as Record<string, number>,
    ...(challenge !== undefined && row.status === 'PENDING_AUTHORIZATION' ? { scaChallenge: challenge } : {}),
  };
}

function quoteNotFound(id: string) {
  return apiError('QUOTE_NOT_FOUND', `No quote ${id}`);
}

async function loadQuote(q: Queryable, ctx: Ctx, id: string): Promise<store.QuoteRow> {
  const row = await store.findQuote(q, ctx.platformId, id);
  if (row === undefined) throw quoteNotFound(id);
  return row;
}

/**
 * A quote read for a change: its transaction's row is locked first (PostgreSQL), then the
 * quote is read, so a concurrent authorize, resend, execute or expiry is seen, not overwritten.
 */
async function loadQuoteForChange(tx: Tx, ctx: Ctx, id: string) {
  const first = await loadQuote(tx, ctx, id);
  const transaction = await lockQuoteTransaction(tx, ctx.platformId, first.transaction_id);
  return { quote: await loadQuote(tx, ctx, id), transaction };
}

export async function getQuoteById(ctx: Ctx, id: string) {
  return presentQuote(await loadQuote(ctx.db.k, ctx, id));
}

/** A quote of one customer (an agent's view): another customer's quote does not exist here. */
export async function getCustomerQuote(ctx: Ctx, id: string, customerId: string) {
  const row = await loadQuote(ctx.db.k, ctx, id);
  if (row.customer_id !== customerId) throw quoteNotFound(id);
  return presentQuote(row);
}

// ----------------------------------------------------------------------------- fees

/** Grid's fees plus the platform's: the request's override, else the platform's configured fee for the sending currency. */
function feeSchedule(config: StoredConfig, input: QuoteInput, sendingCurrency: string, now: Date): FeeSchedule {
  let platformFixed = 0n;
  let platformBps = 0n;
  if (input.platformFeeOverride !== undefined) {
    platformFixed = BigInt(input.platformFeeOverride.platformFixedFee.amount);
    platformBps = BigInt(input.platformFeeOverride.platformVariableFeeBps);
  } else {
    // Platform fees exist for USD senders only (the reference), with the fixed fee in USD.
    const configured = (config.feeConfigs ?? []).find(
      (fee) => fee.feeType === 'CROSS_CURRENCY_TRANSACTION' && fee.sourceCurrency === sendingCurrency,
    );
    const fixedCurrency = (configured?.fixedFee as { currency?: unknown } | undefined)?.currency;
    if (
      configured !== undefined &&
      sendingCurrency === 'USD' &&
      (fixedCurrency === undefined || fixedCurrency === sendingCurrency)
    ) {
      platformFixed = BigInt(Number((configured.fixedFee as { amount?: number } | undefined)?.amount ?? 0));
      platformBps = BigInt(Number(configured.variableFeeBps ?? 0));
    }
  }
  return { gridFixed: gridFixedFee(sendingCurrency, now), gridBps: GRID_VARIABLE_FEE_BPS, platformFixed, platformBps };
}

/** The reference's OutgoingRateDetails, expressed through millisatoshis as the reference does. */
function rateDetailsOf(conversion: Conversion, now: Date): Record<string, number> {
  const msatsPerBtc = 1e11;
  const decimals = (code: string) => currencyInfo(code)!.decimals;
  const btcPerUnit = (code: string) => unitsPerUsd('BTC', now) / unitsPerUsd(code, now);
  // Sending smallest unit -> msats, after the variable fee; msats -> receiving smallest unit at the customer's rate.
  const gridRate = Number(GRID_VARIABLE_FEE_BPS) / 10_000;
  const sendToMsats =
    (btcPerUnit(conversion.sendingCurrency) * msatsPerBtc) / 10 ** decimals(conversion.sendingCurrency);
  const rate = decimalToNumber(conversion.rate);
  const receivingPerMsat =
    (rate * 10 ** decimals(conversion.receivingCurrency)) / 10 ** decimals(conversion.sendingCurrency) / sendToMsats;
  const significant = (value: number) => Number(value.toPrecision(10));
  return {
    counterpartyMultiplier: significant(receivingPerMsat),
    counterpartyFixedFee: 0,
    gridApiMultiplier: significant(sendToMsats * (1 - gridRate)),
    gridApiFixedFee: Number(conversion.gridFixedFee),
    gridApiVariableFeeRate: gridRate,
    gridApiVariableFeeAmount: Number(conversion.gridVariableFee),
  };
}

// ----------------------------------------------------------------------------- planning

type Funding = TransactionConversion['funding'];

interface SourcePlan {
  funding: Funding;
  currency: string;
  customerId: string | null;
  internal?: InternalAccountView;
  external?: TransferCounterparty;
  customer?: CustomerRow;
  presented: Record<string, unknown>;
}

interface DestinationPlan {
  currency: string;
  payout: QuotePayout;
  /** External account id or UMA address. */
  destinationId: string;
  paymentRail: string | null;
  railSelectionMode: 'AUTO' | 'MANUAL' | null;
  instant: boolean;
  lookup?: ReceiverLookup;
  presented: Record<string, unknown>;
}

function invalid(field: string, message: string) {
  return apiError('INVALID_INPUT', `${field} ${message}`, { errors: [{ field, message }] });
}

/**
 * The network of a crypto funding: one the currency moves on, and given where the currency
 * needs it (src/currencies.ts). A fiat funding has no network; the field means nothing there
 * and is left alone, as the reference does not refuse it.
 */
function checkCryptoNetwork(source: RealtimeSourceInput, errors: FieldErrors): void {
  const networks = cryptoNetworksOf(source.currency).map((n) => n.network);
  if (networks.length === 0) return;
  if (source.cryptoNetwork === undefined) {
    if (cryptoNetworkRequired(source.currency)) {
      errors.add(
        'source.cryptoNetwork',
        `is required when funding in ${source.currency}: name the network the funds arrive on`,
        { enum: networks },
      );
    }
  } else if (!networks.includes(source.cryptoNetwork)) {
    errors.add('source.cryptoNetwork', `must be a network ${source.currency} moves on (${networks.join(', ')})`, {
      enum: networks,
    });
  }
}

/**
 * Step 1: the request's shape (`schemaErrors`, what the schema found) and what the shape
 * cannot say, reported together. With schema errors the body may be anything, so each rule
 * looks only at parts of the expected type.
 */
function checkCombinations(input: QuoteInput, schemaErrors: FieldError[]): void {
  const errors = new FieldErrors();
  errors.errors.push(...schemaErrors);
  const body = plainObject<Partial<QuoteInput>>(input) ?? {};
  const source = plainObject<QuoteInput['source']>(body.source);
  const destination = plainObject<QuoteInput['destination']>(body.destination);
  if (body.scaFactor === 'TOTP')
    errors.add('scaFactor', 'cannot be TOTP: a TOTP code cannot be bound to this payment; use SMS_OTP or PASSKEY', {
      enum: ['SMS_OTP', 'PASSKEY'],
    });
  if (body.immediatelyExecute === true && source?.sourceType === 'REALTIME_FUNDING') {
    errors.add(
      'immediatelyExecute',
      'cannot be true for a REALTIME_FUNDING source: such a quote is executed by paying its instructions',
    );
  }
  if (source?.sourceType === 'REALTIME_FUNDING' && typeof source.currency === 'string')
    checkCryptoNetwork(source, errors);
  if (destination?.destinationType === 'UMA_ADDRESS') {
    if (body.lookupId === undefined)
      errors.add(
        'lookupId',
        'is required to pay a UMA address: look the receiver up first (GET /receiver/uma/{receiverUmaAddress})',
      );
    if (typeof destination.umaAddress === 'string' && parseUmaAddress(destination.umaAddress) === undefined) {
      errors.add('destination.umaAddress', 'must be a UMA address such as $name@domain.example');
    }
  }
  // A field the schema already refused is named once.
  const seen = new Set<string>();
  const unique = errors.errors.filter((e) => !seen.has(e.field) && seen.add(e.field));
  if (unique.length > 0) throw invalidInput(unique);
}

/**
 * Step 2 for both sides: each is planned even when the other fails. The first refusal
 * decides the answer; when it is a 400 INVALID_INPUT, it names the unusable fields of both
 * sides at once.
 */
async function planSides(
  tx: Tx,
  ctx: Ctx,
  input: QuoteInput,
): Promise<{ source: SourcePlan; destination: DestinationPlan }> {
  const listed = (err: unknown) =>
    err instanceof ApiError && err.code === 'INVALID_INPUT'
      ? (err.details?.errors as FieldError[] | undefined)
      : undefined;
  let first: unknown;
  const fieldErrors: FieldError[] = [];
  const attempt = async <T>(plan: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await plan();
    } catch (err) {
      // Only refusals are gathered: anything else (a bug, a PostgreSQL conflict to retry) goes up as it is.
      if (!(err instanceof ApiError)) throw err;
      first ??= err;
      if (listed(first) !== undefined) fieldErrors.push(...(listed(err) ?? []));
      return undefined;
    }
  };
  const source = await attempt(() => planSource(tx, ctx, input));
  const destination = await attempt(() => planDestination(tx, ctx, input));
  if (first !== undefined) throw listed(first) !== undefined ? invalidInput(fieldErrors) : first;
  return { source: source!, destination: destination! };
}

/**
 * An internal account a quote moves money from or to: it exists (else `missing`, what the
 * request named) and is ACTIVE. Checked when the quote is made and again when it is executed.
 */
async function usableInternal(
  tx: Tx,
  ctx: Ctx,
  accountId: string,
  field: string,
  missing: string,
): Promise<InternalAccountView> {
  const internal = await findInternalAccount(tx, ctx.platformId, accountId);
  if (internal === undefined) throw invalid(field, missing);
  if (internal.status !== 'ACTIVE') throw invalid(field, `is ${internal.status}`);
  return internal;
}

/**
 * An external account a quote moves money from or to: it is live (else `missing`), verified and
 * ACTIVE. `forPayment`: money moves with it in this transaction, so it is read under a share
 * lock on PostgreSQL (see findTransferCounterparty).
 */
async function usableExternal(
  tx: Tx,
  ctx: Ctx,
  accountId: string,
  field: string,
  missing: string,
  forPayment: boolean,
): Promise<TransferCounterparty> {
  const external = await findTransferCounterparty(tx, ctx.platformId, accountId, forPayment);
  if (external === undefined) throw invalid(field, missing);
  requireActiveCounterparty(external, field);
  return external;
}

/** A pull from a sandbox bank account whose identifier selects insufficient funds (src/sandbox/magic.ts) is refused. */
function requirePullFunds(source: TransferCounterparty): void {
  if (pullSourceScenarioFor(source.primaryIdentifier)?.kind !== 'INSUFFICIENT_FUNDS') return;
  throw apiError('INVALID_AMOUNT', `Insufficient funds: the bank holding ${source.id} declined the pull`, {
    reason: 'INSUFFICIENT_BALANCE',
    errors: [{ field: 'source.accountId', message: 'has insufficient funds for this payment' }],
  });
}

async function planSource(tx: Tx, ctx: Ctx, input: QuoteInput): Promise<SourcePlan> {
  const source = input.source;
  if (source.sourceType === 'REALTIME_FUNDING') {
    const customer =
      source.customerId !== undefined
        ? await customerNamedBy(tx, ctx.platformId, source.customerId, 'source.customerId')
        : undefined;
    return {
      funding: 'REALTIME_FUNDING',
      currency: source.currency,
      customerId: customer?.id ?? null,
      ...(customer ? { customer } : {}),
      presented: {
        sourceType: 'REALTIME_FUNDING',
        currency: source.currency,
        ...(source.customerId ? { customerId: source.customerId } : {}),
        ...(source.cryptoNetwork ? { cryptoNetwork: source.cryptoNetwork } : {}),
      },
    };
  }
  const presented = {
    sourceType: 'ACCOUNT',
    accountId: source.accountId,
    ...(source.customerId ? { customerId: source.customerId } : {}),
  };
  const ownerCheck = async (accountCustomerId: string | null) => {
    if (source.customerId === undefined) return accountCustomerId;
    if (accountCustomerId !== null && accountCustomerId !== source.customerId) {
      throw invalid(
        'source.customerId',
        `is ${source.customerId}, but the source account belongs to ${accountCustomerId}`,
      );
    }
    return (await customerNamedBy(tx, ctx.platformId, source.customerId, 'source.customerId')).id;
  };
  if (source.accountId.startsWith('InternalAccount:')) {
    const internal = await usableInternal(
      tx,
      ctx,
      source.accountId,
      'source.accountId',
      `names no internal account of this platform: ${source.accountId}`,
    );
    if (input.immediatelyExecute === true && internal.type === 'EMBEDDED_WALLET') {
      throw invalid(
        'immediatelyExecute',
        'cannot be true for an EMBEDDED_WALLET source: create the quote, then execute it with the wallet signature',
      );
    }
    return {
      funding: 'INTERNAL_ACCOUNT',
      currency: internal.currency,
      customerId: await ownerCheck(internal.customer_id),
      internal,
      presented,
    };
  }
  // Executed in this very transaction (immediatelyExecute), the pull happens now.
  const pullsNow = input.immediatelyExecute === true;
  const external = await usableExternal(
    tx,
    ctx,
    source.accountId,
    'source.accountId',
    `names no internal or external account of this platform: ${source.accountId}`,
    pullsNow,
  );
  if (external.kind !== 'BANK') {
    throw invalid(
      'source.accountId',
      `is a ${external.accountType}, which cannot be pulled from; fund the quote from an internal account or by real-time funding`,
    );
  }
  if (pullsNow) requirePullFunds(external);
  return {
    funding: 'EXTERNAL_ACCOUNT',
    currency: external.currency,
    customerId: await ownerCheck(external.customerId),
    external,
    presented,
  };
}

function checkPayerData(lookup: ReceiverLookup, info: Record<string, unknown> | undefined): void {
  const errors = new FieldErrors();
  for (const field of lookup.requiredPayerDataFields) {
    const value = info?.[field.name];
    if (field.mandatory && (value === undefined || value === null || value === '')) {
      errors.add(`senderCustomerInfo.${field.name}`, `is required by the receiver (lookup ${lookup.id})`);
    }
  }
  errors.throwIfAny();
}

async function planDestination(tx: Tx, ctx: Ctx, input: QuoteInput): Promise<DestinationPlan> {
  const destination = input.destination;
  if (destination.destinationType === 'UMA_ADDRESS') {
    const lookup = await findReceiverLookup(tx, ctx.platformId, input.lookupId!);
    if (lookup === undefined) throw invalid('lookupId', `names no receiver lookup of this platform: ${input.lookupId}`);
    const parsed = parseUmaAddress(destination.umaAddress)!;
    const address = `$${parsed.name}@${parsed.domain}`;
    if (lookup.kind !== 'UMA' || lookup.umaAddress !== address) {
      throw invalid('lookupId', `was made for ${lookup.umaAddress ?? lookup.externalAccountId}, not ${address}`);
    }
    const currency = destination.currency ?? lookup.currencies[0]!.code;
    if (!lookup.currencies.some((c) => c.code === currency)) {
      throw apiError('INVALID_CURRENCY', `${address} does not receive ${currency}`, {
        errors: [
          {
            field: 'destination.currency',
            message: `must be one of ${lookup.currencies.map((c) => c.code).join(', ')}`,
          },
        ],
      });
    }
    checkPayerData(lookup, input.senderCustomerInfo);
    return {
      currency,
      payout: { destinationType: 'UMA_ADDRESS', umaScenario: lookup.scenario },
      destinationId: address,
      paymentRail: null,
      railSelectionMode: null,
      instant: true,
      lookup,
      presented: { destinationType: 'UMA_ADDRESS', umaAddress: address, currency },
    };
  }
  if (destination.accountId.startsWith('InternalAccount:')) return planInternalDestination(tx, ctx, input, destination);
  const missing = `names no internal or external account of this platform: ${destination.accountId}`;
  const external = await usableExternal(
    tx,
    ctx,
    destination.accountId,
    'destination.accountId',
    missing,
    input.immediatelyExecute === true,
  );
  let paymentRail: string | null = external.paymentRails?.[0] ?? null;
  let railSelectionMode: 'AUTO' | 'MANUAL' | null = paymentRail === null ? null : 'AUTO';
  if (destination.paymentRail !== undefined) {
    if (external.paymentRails === undefined || !external.paymentRails.includes(destination.paymentRail)) {
      throw apiError('INVALID_INPUT', `destination.paymentRail is not a rail ${external.id} can be paid over`, {
        errors: [
          {
            field: 'destination.paymentRail',
            message: `must be one of ${external.paymentRails?.join(', ') ?? 'none (this account is not paid over a bank rail)'}`,
          },
        ],
      });
    }
    paymentRail = destination.paymentRail;
    railSelectionMode = 'MANUAL';
  }
  let lookup: ReceiverLookup | undefined;
  if (input.lookupId !== undefined) {
    lookup = await findReceiverLookup(tx, ctx.platformId, input.lookupId);
    if (lookup === undefined) throw invalid('lookupId', `names no receiver lookup of this platform: ${input.lookupId}`);
    if (lookup.kind !== 'EXTERNAL_ACCOUNT' || lookup.externalAccountId !== external.id) {
      throw invalid('lookupId', `was made for ${lookup.umaAddress ?? lookup.externalAccountId}, not ${external.id}`);
    }
    checkPayerData(lookup, input.senderCustomerInfo);
  }
  const instant = INSTANT_WALLETS.has(external.accountType) || (paymentRail !== null && INSTANT_RAILS.has(paymentRail));
  return {
    currency: external.currency,
    payout: {
      destinationType: 'ACCOUNT',
      counterpartyIdentifier: external.primaryIdentifier,
      accountType: external.accountType,
    },
    destinationId: external.id,
    paymentRail,
    railSelectionMode,
    instant,
    ...(lookup ? { lookup } : {}),
    presented: {
      destinationType: 'ACCOUNT',
      accountId: external.id,
      ...(destination.paymentRail ? { paymentRail: destination.paymentRail } : {}),
    },
  };
}

/** An internal account as the destination: the conversion is a book transfer, credited at once. */
async function planInternalDestination(
  tx: Tx,
  ctx: Ctx,
  input: QuoteInput,
  destination: AccountDestinationInput,
): Promise<DestinationPlan> {
  const internal = await usableInternal(
    tx,
    ctx,
    destination.accountId,
    'destination.accountId',
    `names no internal or external account of this platform: ${destination.accountId}`,
  );
  const errors = new FieldErrors();
  if (destination.paymentRail !== undefined)
    errors.add(
      'destination.paymentRail',
      'cannot be given for an internal account: the payment is a book transfer with no rail',
    );
  if (input.lookupId !== undefined)
    errors.add('lookupId', 'cannot be given for an internal account: there is no receiver to look up');
  errors.throwIfAny();
  return {
    currency: internal.currency,
    payout: { destinationType: 'INTERNAL_ACCOUNT', accountId: internal.id },
    destinationId: internal.id,
    paymentRail: null,
    railSelectionMode: null,
    instant: true,
    presented: { destinationType: 'ACCOUNT', accountId: internal.id },
  };
}

function checkCurrencies(input: QuoteInput, sending: string, receiving: string): void {
  if (sending === receiving) {
    throw apiError(
      'INVALID_CURRENCY',
      `Both sides are in ${sending}: a quote converts between two currencies; move same-currency funds with POST /transfer-out or POST /transfer-in`,
      {
        errors: [{ field: 'destination', message: `is in ${receiving}, the sending currency` }],
      },
    );
  }
  const errors: { field: string; message: string }[] = [];
  const sourceField = input.source.sourceType === 'REALTIME_FUNDING' ? 'source.currency' : 'source.accountId';
  if (!hasRate(sending))
    errors.push({ field: sourceField, message: `is in ${sending}, which railyard does not quote` });
  if (!hasRate(receiving))
    errors.push({ field: 'destination', message: `is in ${receiving}, which railyard does not quote` });
  if (errors.length > 0)
    throw apiError('INVALID_CURRENCY', `No rate for ${sending} to ${receiving}`, {
      errors,
      supportedCurrencies: ratedCurrencies(),
    });
  const fieldErrors = new FieldErrors();
  if (PURPOSE_REQUIRED_CURRENCIES.has(receiving) && input.purposeOfPayment === undefined) {
    fieldErrors.add('purposeOfPayment', `is required for payments in ${receiving}`);
  }
  if (input.platformFeeOverride !== undefined) {
    if (sending !== 'USD')
      fieldErrors.add('platformFeeOverride', `applies only to quotes sending USD; this one sends ${sending}`);
    else if (input.platformFeeOverride.platformFixedFee.currency !== 'USD') {
      fieldErrors.add('platformFeeOverride.platformFixedFee.currency', 'must be USD, the sending currency', {
        enum: ['USD'],
      });
    }
  }
  fieldErrors.throwIfAny();
}

function convert(input: QuoteInput, sending: string, receiving: string, schedule: FeeSchedule, now: Date): Conversion {
  const rate = customerRate(sending, receiving, now);
  const locked = BigInt(input.lockedCurrencyAmount);
  try {
    return input.lockedCurrencySide === 'SENDING'
      ? convertSending(sending, receiving, rate, locked, schedule)
      : convertReceiving(sending, receiving, rate, locked, schedule);
  } catch (err) {
    if (!(err instanceof ConversionOutOfRange)) throw err;
    throw apiError('AMOUNT_OUT_OF_RANGE', `${input.lockedCurrencyAmount} cannot be quoted: ${err.message}`, {
      errors: [{ field: 'lockedCurrencyAmount', message: err.message }],
    });
  }
}

function checkLimits(config: StoredConfig, conversion: Conversion, lookup: ReceiverLookup | undefined): void {
  const limits = config.supportedCurrencies.find((c) => c.currencyCode === conversion.sendingCurrency);
  if (limits !== undefined) {
    if (conversion.totalSending < BigInt(limits.minAmount)) {
      throw apiError(
        'AMOUNT_OUT_OF_RANGE',
        `The minimum ${conversion.sendingCurrency} payment is ${limits.minAmount}`,
        {
          minAmount: limits.minAmount,
          errors: [{ field: 'lockedCurrencyAmount', message: `makes a sending amount below ${limits.minAmount}` }],
        },
      );
    }
    if (conversion.totalSending > BigInt(limits.maxAmount)) {
      throw apiError(
        'TRANSACTION_SIZE_LIMIT_EXCEEDED',
        `The maximum single ${conversion.sendingCurrency} payment is ${limits.maxAmount}; this one sends ${conversion.totalSending}`,
        {
          maxAmount: limits.maxAmount,
          errors: [{ field: 'lockedCurrencyAmount', message: `makes a sending amount above ${limits.maxAmount}` }],
        },
      );
    }
  }
  const receiver = lookup?.currencies.find((c) => c.code === conversion.receivingCurrency);
  if (
    receiver !== undefined &&
    (conversion.totalReceiving < BigInt(receiver.min) || conversion.totalReceiving > BigInt(receiver.max))
  ) {
    throw apiError(
      'AMOUNT_OUT_OF_RANGE',
      `The receiver accepts ${receiver.min} to ${receiver.max} ${conversion.receivingCurrency}; this quote delivers ${conversion.totalReceiving}`,
      {
        minAmount: receiver.min,
        maxAmount: receiver.max,
        errors: [
          {
            field: 'lockedCurrencyAmount',
            message: `makes a receiving amount outside ${receiver.min}..${receiver.max}`,
          },
        ],
      },
    );
  }
}

function inScaRegion(customer: CustomerRow | undefined): boolean {
  if (customer === undefined) return false;
  const address = customerProfile(customer).address as { country?: unknown } | undefined;
  return typeof address?.country === 'string' && SCA_COUNTRIES.has(address.country.toUpperCase());
}

function realtimeInstructions(quoteId: string, conversion: Conversion, cryptoNetwork: string | undefined) {
  const info = fundingInfo(quoteId, conversion.sendingCurrency, {
    network: cryptoNetwork,
    amount: conversion.totalSending,
  });
  const amount = `${conversion.totalSending} (smallest unit of ${conversion.sendingCurrency})`;
  return [
    {
      instructionsNotes: `Sandbox coordinates: pay exactly ${amount} before the quote expires${'reference' in info ? `, quoting ${String(info.reference)}` : ''}; in the sandbox, POST /sandbox/send with this quote's id does it.`,
      isPlatformAccount: true,
      accountOrWalletInfo: info,
    },
  ];
}

/** A payment from an embedded wallet: the payload its holder signs to release it (POST /quotes/{id}/execute). */
async function walletInstructions(
  tx: Queryable,
  ctx: Ctx,
  quoteId: string,
  wallet: InternalAccountView,
  conversion: Conversion,
) {
  const payloadToSign = await quotePayloadToSign(ctx, tx, {
    id: quoteId,
    sourceAccountId: wallet.id,
    totalSendingAmount: conversion.totalSending,
    currency: conversion.sendingCurrency,
  });
  return [
    {
      instructionsNotes:
        'Stamp payloadToSign, exactly as given, with the key of a live session of the source wallet, and send the stamp as Grid-Wallet-Signature on POST /quotes/{quoteId}/execute.',
      isPlatformAccount: false,
      accountOrWalletInfo: { accountType: 'EMBEDDED_WALLET', payloadToSign },
    },
  ];
}

/** The source wallet and payload to sign of a quote paid from an embedded wallet; undefined for any other quote. */
function walletSigning(quote: store.QuoteRow): { accountId: string; payloadToSign: string } | undefined {
  const instructions = parseJson<{ accountOrWalletInfo?: { accountType?: string; payloadToSign?: string } }[]>(
    quote.payment_instructions,
  );
  const wallet = instructions?.find((i) => i.accountOrWalletInfo?.accountType === 'EMBEDDED_WALLET');
  if (wallet === undefined) return undefined;
  const source = JSON.parse(quote.source) as { accountId: string };
  return { accountId: source.accountId, payloadToSign: wallet.accountOrWalletInfo!.payloadToSign! };
}

/** A new challenge; it lasts SCA_CHALLENGE_TTL_MS, but never past the quote it authorizes. */
function newChallenge(quoteExpiresAt: string, now: Date): ScaChallengeView {
  const expiresAt = iso(new Date(now.getTime() + SCA_CHALLENGE_TTL_MS));
  // The customer has no other enrolled factor in railyard, so every challenge is an SMS code.
  return {
    id: newId('ScaChallenge'),
    expiresAt: expiresAt < quoteExpiresAt ? expiresAt : quoteExpiresAt,
    factor: 'SMS_OTP',
    availableFactors: ['SMS_OTP'],
    purpose: 'PAYOUT',
  };
}

// ----------------------------------------------------------------------------- jobs

interface ExpirePayload {
  quoteId: string;
  transactionId: string;
}

/** At expiresAt, a quote that was neither executed nor funded expires (or fails, when it still awaited authorization). */
export const quoteExpiryJob = defineJob<ExpirePayload>('quote.expire', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const row = await lockQuoteTransaction(tx, job.platformId, job.payload.transactionId);
    await expireQuoteTransaction(tx, row, ctx.now);
  },
});

// ----------------------------------------------------------------------------- operations

/**
 * Executes an account-funded quote, unless its customer is in an SCA region: then the
 * payment waits in PENDING_AUTHORIZATION with a challenge, and authorizing it executes it.
 */
async function executeOrChallenge(
  tx: Tx,
  ctx: Ctx,
  quote: store.QuoteRow,
  transaction: TransactionRow,
  options: { checked?: boolean } = {},
): Promise<store.QuoteRow> {
  const customer =
    quote.customer_id === null ? undefined : await findCustomerRow(tx, ctx.platformId, quote.customer_id);
  if (!inScaRegion(customer)) return (await execute(tx, ctx, quote, transaction, options)).quote;
  // A payment that could not start is refused now, not after the customer answers the challenge.
  if (options.checked !== true)
    await requirePayable(tx, ctx, transaction, JSON.parse(transaction.conversion!) as TransactionConversion);
  const after = await moveQuoteAuthorization(tx, transaction, ctx.now, 'PENDING_AUTHORIZATION');
  const challenged = {
    ...quote,
    status: after.status,
    sca_challenge: JSON.stringify(newChallenge(quote.expires_at, ctx.now)),
    updated_at: iso(ctx.now),
  };
  await store.saveQuoteState(tx, challenged);
  return challenged;
}

/**
 * The accounts of a quote, checked again when its payment starts: either side may have been
 * deleted, frozen or lost its verification since the quote was made, and money must not move
 * from or to it then. A pull also needs funds at the bank.
 */
async function requirePayable(
  tx: Tx,
  ctx: Ctx,
  transaction: TransactionRow,
  conversion: TransactionConversion,
): Promise<void> {
  const gone = (id: string) => `names ${id}, which no longer exists`;
  if (conversion.funding === 'INTERNAL_ACCOUNT') {
    await usableInternal(
      tx,
      ctx,
      transaction.internal_account_id,
      'source.accountId',
      gone(transaction.internal_account_id),
    );
  } else if (conversion.funding === 'EXTERNAL_ACCOUNT') {
    requirePullFunds(
      await usableExternal(
        tx,
        ctx,
        transaction.source_account_id,
        'source.accountId',
        gone(transaction.source_account_id),
        true,
      ),
    );
  }
  const { payout } = conversion;
  if (payout.destinationType === 'ACCOUNT') {
    await usableExternal(
      tx,
      ctx,
      transaction.destination_account_id,
      'destination.accountId',
      gone(transaction.destination_account_id),
      true,
    );
  } else if (payout.destinationType === 'INTERNAL_ACCOUNT') {
    await usableInternal(tx, ctx, payout.accountId, 'destination.accountId', gone(payout.accountId));
  }
}

interface ExecuteOptions {
  /** Real-time funding: the amount that arrived. */
  paidAmount?: bigint | undefined;
  /** The payment waited in PENDING_AUTHORIZATION for a challenge now satisfied. */
  authorized?: boolean;
  /** The quote was made in this very transaction (immediatelyExecute), its accounts checked and locked then. */
  checked?: boolean;
}

/**
 * Starts the payment of a PENDING quote whose transaction row the caller holds locked (or of
 * one awaiting authorization, once `authorized`), after checking its accounts again.
 */
async function execute(
  tx: Tx,
  ctx: Ctx,
  quote: store.QuoteRow,
  transaction: TransactionRow,
  options: ExecuteOptions = {},
) {
  const conversion = JSON.parse(transaction.conversion!) as TransactionConversion;
  if (options.checked !== true) await requirePayable(tx, ctx, transaction, conversion);
  const { payout } = conversion;
  try {
    const after = await executeQuoteTransaction(tx, transaction, ctx.now, railFor(payout).planPayout(payout), options);
    return { quote: { ...quote, status: after.status }, transaction: after };
  } catch (err) {
    throw ledgerRefusal(err, 'lockedCurrencyAmount');
  }
}

export async function createQuote(
  ctx: Ctx,
  input: QuoteInput,
  idempotencyKey: string | undefined,
  schemaErrors: FieldError[] = [],
): Promise<Reply> {
  checkCombinations(input, schemaErrors);
  return runCommand(ctx, { operationId: 'createQuote', idempotencyKey, request: input }, async (tx) => {
    const { source, destination } = await planSides(tx, ctx, input);
    if (destination.destinationId === (source.internal?.id ?? source.external?.id))
      throw invalid('destination.accountId', 'is the source account');
    checkCurrencies(input, source.currency, destination.currency);
    const config = await readPlatformConfig(tx, ctx.platformId);
    const conversion = convert(
      input,
      source.currency,
      destination.currency,
      feeSchedule(config, input, source.currency, ctx.now),
      ctx.now,
    );
    checkLimits(config, conversion, destination.lookup);

    const quoteId = newId('Quote');
    const transactionId = newId('Transaction');
    const now = ctx.now;
    const sca = source.funding === 'REALTIME_FUNDING' && inScaRegion(source.customer);
    const expiresAt = new Date(now.getTime() + (destination.instant ? INSTANT_QUOTE_TTL_MS : STANDARD_QUOTE_TTL_MS));
    const rateDetails = rateDetailsOf(conversion, now);
    for (const currency of [conversion.sendingCurrency, conversion.receivingCurrency]) {
      await openSystemAccounts(tx, { platformId: ctx.platformId, currency, now });
    }
    const fundsAccountId = source.internal?.id ?? suspenseAccountId(ctx.platformId, conversion.sendingCurrency);
    const transactionConversion: TransactionConversion = {
      quoteId,
      funding: source.funding,
      ...(source.funding === 'REALTIME_FUNDING' && source.customerId !== null
        ? { sourceCustomerId: source.customerId }
        : {}),
      receivingCurrency: conversion.receivingCurrency,
      receivingAmount: conversion.totalReceiving.toString(),
      exchangeRate: decimalToNumber(conversion.rate),
      fees: conversion.fees.toString(),
      platformFees: conversion.platformFees.toString(),
      platformFeeAccountId:
        conversion.platformFees > 0n
          ? ((await findOwnerAccountIn(tx, ctx.platformId, null, conversion.sendingCurrency))?.id ?? null)
          : null,
      rateDetails,
      destinationType: destination.payout.destinationType === 'UMA_ADDRESS' ? 'UMA_ADDRESS' : 'ACCOUNT',
      ...(input.description !== undefined ? { description: input.description } : {}),
      payout: destination.payout,
    };
    const transaction = await openQuoteTransaction(
      tx,
      {
        id: transactionId,
        platformId: ctx.platformId,
        customerId: source.customerId,
        platformCustomerId: await platformCustomerIdOf(tx, ctx.platformId, source.customerId),
        status: sca ? 'PENDING_AUTHORIZATION' : 'PENDING',
        fundsAccountId,
        sourceAccountId: source.internal?.id ?? source.external?.id ?? fundsAccountId,
        destinationId: destination.destinationId,
        currency: conversion.sendingCurrency,
        amount: conversion.totalSending,
        paymentRail: destination.paymentRail,
        railSelectionMode: destination.railSelectionMode,
        remittanceInformation: input.remittanceInformation,
        purposeOfPayment: input.purposeOfPayment,
        conversion: transactionConversion,
      },
      now,
    );

    let quote: store.QuoteRow = {
      id: quoteId,
      platform_id: ctx.platformId,
      customer_id: source.customerId,
      transaction_id: transactionId,
      lookup_id: input.lookupId ?? null,
      source: JSON.stringify(source.presented),
      destination: JSON.stringify(destination.presented),
      locked_side: input.lockedCurrencySide,
      locked_amount: String(input.lockedCurrencyAmount),
      sending_currency: conversion.sendingCurrency,
      receiving_currency: conversion.receivingCurrency,
      sending_amount: conversion.totalSending.toString(),
      receiving_amount: conversion.totalReceiving.toString(),
      exchange_rate: decimalToString(conversion.rate),
      fees: conversion.fees.toString(),
      platform_fees: conversion.platformFees.toString(),
      rate_details: JSON.stringify(rateDetails),
      payment_instructions:
        source.funding === 'REALTIME_FUNDING' && !sca
          ? JSON.stringify(realtimeInstructions(quoteId, conversion, realtimeNetwork(input)))
          : source.internal?.type === 'EMBEDDED_WALLET' && !sca
            ? JSON.stringify(await walletInstructions(tx, ctx, quoteId, source.internal, conversion))
            : null,
      sca_challenge: sca ? JSON.stringify(newChallenge(iso(expiresAt), now)) : null,
      sender_customer_info: input.senderCustomerInfo !== undefined ? JSON.stringify(input.senderCustomerInfo) : null,
      expires_at: iso(expiresAt),
      created_at: iso(now),
      updated_at: iso(now),
      status: sca ? 'PENDING_AUTHORIZATION' : 'PENDING',
    };
    const { status: _status, ...stored } = quote;
    await store.insertQuote(tx, stored);
    await quoteExpiryJob.schedule(tx, {
      platformId: ctx.platformId,
      payload: { quoteId, transactionId },
      dueAt: expiresAt,
      now,
    });

    if (input.immediatelyExecute === true) {
      quote = await executeOrChallenge(tx, ctx, quote, transaction, { checked: true });
    }
    return { status: sca ? 202 : 201, body: presentQuote(quote) };
  });
}

/** A quote may be executed or funded only while PENDING and before it expires. */
function checkExecutable(quote: store.QuoteRow, now: Date, conflict: (message: string) => Error): void {
  if (quote.status === 'EXPIRED' || (quote.status === 'PENDING' && iso(now) >= quote.expires_at)) {
    throw conflict(`Quote ${quote.id} expired at ${quote.expires_at}; create a new quote`);
  }
  if (quote.status === 'PENDING_AUTHORIZATION')
    throw conflict(
      `Quote ${quote.id} awaits Strong Customer Authentication: authorize it first (POST /quotes/${quote.id}/authorize)`,
    );
  if (quote.status === 'FAILED') throw conflict(`Quote ${quote.id} failed and cannot be executed; create a new quote`);
  if (quote.status !== 'PENDING') throw conflict(`Quote ${quote.id} was already executed (it is ${quote.status})`);
}

export async function executeQuote(
  ctx: Ctx,
  quoteId: string,
  body: { scaFactor?: string | undefined } | undefined,
  idempotencyKey: string | undefined,
  walletSignature?: string | undefined,
): Promise<Reply> {
  // A payment from an embedded wallet needs its holder's stamp; a refusal changes nothing.
  const found = await store.findQuote(ctx.db.k, ctx.platformId, quoteId);
  const signing = found !== undefined ? walletSigning(found) : undefined;
  // (An expired or executed quote is refused as such below, not for its signature.)
  if (signing !== undefined && found!.status === 'PENDING' && iso(ctx.now) < found!.expires_at) {
    await checkQuoteSignature(ctx, signing.accountId, signing.payloadToSign, walletSignature);
  }
  return runCommand(
    ctx,
    { operationId: 'executeQuote', idempotencyKey, request: { quoteId, body: body ?? {} }, conflictCode: 'CONFLICT' },
    async (tx) => {
      // The row lock is what makes a second, concurrent execute see PROCESSING.
      const { quote, transaction } = await loadQuoteForChange(tx, ctx, quoteId);
      if (body?.scaFactor === 'TOTP')
        throw invalid(
          'scaFactor',
          'cannot be TOTP: a TOTP code cannot be bound to this payment; use SMS_OTP or PASSKEY',
        );
      if ((JSON.parse(quote.source) as { sourceType: string }).sourceType === 'REALTIME_FUNDING') {
        throw invalid(
          'quoteId',
          'names a real-time-funded quote: it executes when its payment instructions are paid (in the sandbox, POST /sandbox/send)',
        );
      }
      checkExecutable(quote, ctx.now, (message) => apiError('CONFLICT', message));
      return { status: 200, body: presentQuote(await executeOrChallenge(tx, ctx, quote, transaction)) };
    },
  );
}

export interface ScaAuthorizationInput {
  code?: string | null | undefined;
  passkeyAssertion?: Record<string, unknown> | null | undefined;
  origin?: string | null | undefined;
  endUserIpAddress?: string | null | undefined;
}

export async function authorizeQuote(ctx: Ctx, quoteId: string, input: ScaAuthorizationInput) {
  const errors = new FieldErrors();
  const hasCode = input.code !== undefined && input.code !== null;
  const hasPasskey = input.passkeyAssertion !== undefined && input.passkeyAssertion !== null;
  if (hasCode === hasPasskey) {
    errors.add('code', 'or passkeyAssertion: give exactly one');
    errors.add('passkeyAssertion', 'or code: give exactly one');
  }
  if (hasPasskey && (input.origin === undefined || input.origin === null))
    errors.add('origin', 'is required with passkeyAssertion');
  return ctx.db.transaction(async (tx) => {
    const { quote, transaction } = await loadQuoteForChange(tx, ctx, quoteId);
    const challenge = parseJson<ScaChallengeView>(quote.sca_challenge);
    if (transaction.status !== 'PENDING_AUTHORIZATION' || challenge === undefined) {
      throw apiError('CONFLICT', `Quote ${quoteId} has no challenge to authorize (it is ${transaction.status})`);
    }
    // The expiry job may not have run yet; an expired quote is past authorizing all the same.
    if (iso(ctx.now) >= quote.expires_at)
      throw apiError('CONFLICT', `Quote ${quoteId} expired at ${quote.expires_at}; create a new quote`);
    errors.throwIfAny();
    if (iso(ctx.now) > challenge.expiresAt) {
      throw invalid(
        'code',
        `answers a challenge that expired at ${challenge.expiresAt}; an expired challenge cannot be authorized or renewed, so create a new quote`,
      );
    }
    if (hasPasskey)
      throw invalid('passkeyAssertion', `cannot satisfy this challenge: its factor is ${challenge.factor}`);
    if (input.code !== SCA_SANDBOX_CODE)
      throw invalid('code', 'is not the code of this challenge (the sandbox code is 123456)');

    const source = JSON.parse(quote.source) as { sourceType: string; cryptoNetwork?: string };
    if (source.sourceType !== 'REALTIME_FUNDING') {
      // Funded from an account: the execute that asked for this authorization happens now,
      // straight from PENDING_AUTHORIZATION to PROCESSING.
      const authorized: store.QuoteRow = { ...quote, sca_challenge: null, updated_at: iso(ctx.now) };
      await store.saveQuoteState(tx, authorized);
      return presentQuote((await execute(tx, ctx, authorized, transaction, { authorized: true })).quote);
    }
    // Real-time funding: back to PENDING with the instructions released; paying them executes the quote.
    const after = await moveQuoteAuthorization(tx, transaction, ctx.now, 'PENDING');
    const conversion = {
      sendingCurrency: quote.sending_currency,
      totalSending: BigInt(quote.sending_amount),
    } as Conversion;
    const authorized: store.QuoteRow = {
      ...quote,
      status: after.status,
      sca_challenge: null,
      updated_at: iso(ctx.now),
      payment_instructions: JSON.stringify(realtimeInstructions(quote.id, conversion, source.cryptoNetwork)),
    };
    await store.saveQuoteState(tx, authorized);
    return presentQuote(authorized);
  });
}

/**
 * Sends the SMS code of an open challenge again (nothing is sent in the sandbox). The
 * challenge stays the one it was, expiry included: a challenge past its expiresAt cannot be
 * brought back, and the quote fails with SCA_NOT_COMPLETED when it expires.
 */
export async function resendQuoteScaCode(ctx: Ctx, quoteId: string): Promise<void> {
  const quote = await loadQuote(ctx.db.k, ctx, quoteId);
  const challenge = parseJson<ScaChallengeView>(quote.sca_challenge);
  const now = iso(ctx.now);
  if (quote.status !== 'PENDING_AUTHORIZATION' || challenge === undefined || challenge.factor !== 'SMS_OTP') {
    throw apiError('CONFLICT', `Quote ${quoteId} has no SMS challenge to send again (it is ${quote.status})`);
  }
  if (now >= quote.expires_at || now > challenge.expiresAt) {
    throw apiError(
      'CONFLICT',
      `The challenge of quote ${quoteId} expired at ${challenge.expiresAt}; it cannot be sent again`,
    );
  }
}

export interface SandboxSendInput {
  quoteId: string;
  currencyCode: string;
  currencyAmount?: number | undefined;
}

/** Pays a real-time-funded quote's instructions, as the payer's bank would: the quote's payment starts. */
export async function sandboxSend(ctx: Ctx, input: SandboxSendInput) {
  return ctx.db.transaction(async (tx) => {
    const { quote, transaction } = await loadQuoteForChange(tx, ctx, input.quoteId);
    if ((JSON.parse(quote.source) as { sourceType: string }).sourceType !== 'REALTIME_FUNDING') {
      throw invalid('quoteId', 'names a quote funded from an account: execute it with POST /quotes/{quoteId}/execute');
    }
    if (input.currencyCode !== quote.sending_currency) {
      throw apiError(
        'INVALID_CURRENCY',
        `Quote ${quote.id} is funded in ${quote.sending_currency}, not ${input.currencyCode}`,
        {
          errors: [
            { field: 'currencyCode', message: `must be ${quote.sending_currency}, the quote's funding currency` },
          ],
        },
      );
    }
    checkExecutable(quote, ctx.now, (message) => invalid('quoteId', message));
    const paid = input.currencyAmount !== undefined ? BigInt(input.currencyAmount) : undefined;
    return presentTransaction((await execute(tx, ctx, quote, transaction, { paidAmount: paid })).transaction);
  });
}

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
