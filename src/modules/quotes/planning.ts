// Quote planning: what a quote request names, checked and priced before anything is written.
// The order of the checks and the codes they answer are described in service.ts.

import { iso } from '../../clock.js';
import { cryptoNetworkRequired, cryptoNetworksOf, currencyInfo } from '../../currencies.js';
import type { Tx } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { ApiError, apiError, FieldErrors, invalidInput, type FieldError } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { plainObject } from '../../json.js';
import type { QuotePayout } from '../../rails/types.js';
import {
  ConversionOutOfRange,
  convertReceiving,
  convertSending,
  customerRate,
  decimalToNumber,
  GRID_VARIABLE_FEE_BPS,
  gridFixedFee,
  hasRate,
  ratedCurrencies,
  unitsPerUsd,
  type Conversion,
  type FeeSchedule,
} from '../../rates/index.js';
import { parseUmaAddress, pullSourceScenarioFor } from '../../rails/magic.js';
import { customerNamedBy, type CustomerRow } from '../customers/lookup.js';
import {
  findTransferCounterparty,
  requireActiveCounterparty,
  type TransferCounterparty,
} from '../external-accounts/service.js';
import { findInternalAccount, type InternalAccountView } from '../internal-accounts/service.js';
import type { StoredConfig } from '../platform/config.js';
import { findReceiverLookup, type ReceiverLookup } from '../receivers/service.js';
import type { Conversion as TransactionConversion } from '../transactions/service.js';

// ----------------------------------------------------------------------------- constants

/** Quote lifetimes: instant rails (Lightning, Spark, fast stablecoin networks, RTP, SEPA Instant, UMA) and the rest. */
export interface ScaChallengeView {
  id: string;
  expiresAt: string;
  factor: string;
  availableFactors: string[];
  purpose: string;
  passkeyAssertionOptions?: Record<string, unknown>;
  /** Stored, never shown: the WebAuthn challenge a PASSKEY answer must sign. */
  passkeyChallenge?: string;
}

export function parseJson<T>(text: string | null): T | undefined {
  return text === null ? undefined : (JSON.parse(text) as T);
}

export const INSTANT_QUOTE_TTL_MS = 5 * 60 * 1000;
export const STANDARD_QUOTE_TTL_MS = 15 * 60 * 1000;
export const INSTANT_RAILS = new Set(['RTP', 'SEPA_INSTANT', 'FEDNOW']);
export const INSTANT_WALLETS = new Set(['SPARK_WALLET', 'LIGHTNING', 'SOLANA_WALLET', 'BASE_WALLET', 'POLYGON_WALLET']);

/** How long an SCA challenge may be answered. */
export const SCA_CHALLENGE_TTL_MS = 10 * 60 * 1000;

/** The network a real-time-funded quote is paid on, when one was named. */
export function realtimeNetwork(input: QuoteInput): string | undefined {
  return input.source.sourceType === 'REALTIME_FUNDING' ? input.source.cryptoNetwork : undefined;
}

/** Receiving currencies whose corridors ask why the money moves. */
export const PURPOSE_REQUIRED_CURRENCIES = new Set(['INR']);

// ----------------------------------------------------------------------------- input

export interface AccountSourceInput {
  sourceType: 'ACCOUNT';
  accountId: string;
  customerId?: string | undefined;
}
export interface RealtimeSourceInput {
  sourceType: 'REALTIME_FUNDING';
  customerId?: string | undefined;
  currency: string;
  cryptoNetwork?: string | undefined;
}
export interface AccountDestinationInput {
  destinationType: 'ACCOUNT';
  accountId: string;
  paymentRail?: string | undefined;
}
export interface UmaDestinationInput {
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

// ----------------------------------------------------------------------------- fees

/** Grid's fees plus the platform's: the request's override, else the platform's configured fee for the sending currency. */
export function feeSchedule(config: StoredConfig, input: QuoteInput, sendingCurrency: string, now: Date): FeeSchedule {
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
export function rateDetailsOf(conversion: Conversion, now: Date): Record<string, number> {
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

export type Funding = TransactionConversion['funding'];

export interface SourcePlan {
  funding: Funding;
  currency: string;
  customerId: string | null;
  internal?: InternalAccountView;
  external?: TransferCounterparty;
  customer?: CustomerRow;
  presented: Record<string, unknown>;
}

export interface DestinationPlan {
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

export function invalid(field: string, message: string) {
  return apiError('INVALID_INPUT', `${field} ${message}`, { errors: [{ field, message }] });
}

/**
 * The network of a crypto funding: one the currency moves on, and given where the currency
 * needs it (src/currencies.ts). A fiat funding has no network; the field means nothing there
 * and is left alone, as the reference does not refuse it.
 */
export function checkCryptoNetwork(source: RealtimeSourceInput, errors: FieldErrors): void {
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
export function checkCombinations(input: QuoteInput, schemaErrors: FieldError[]): void {
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
export async function planSides(
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
export async function usableInternal(
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
export async function usableExternal(
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

/** A pull from a sandbox bank account whose identifier selects insufficient funds (src/rails/magic.ts) is refused. */
export function requirePullFunds(source: TransferCounterparty): void {
  if (pullSourceScenarioFor(source.primaryIdentifier)?.kind !== 'INSUFFICIENT_FUNDS') return;
  throw apiError('INVALID_AMOUNT', `Insufficient funds: the bank holding ${source.id} declined the pull`, {
    reason: 'INSUFFICIENT_BALANCE',
    errors: [{ field: 'source.accountId', message: 'has insufficient funds for this payment' }],
  });
}

export async function planSource(tx: Tx, ctx: Ctx, input: QuoteInput): Promise<SourcePlan> {
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
  if (pullsNow && ctx.settings.strictIdentifiers === true) {
    throw invalid(
      'immediatelyExecute',
      'cannot be true for a quote funded from an external account: its funds must be pushed from that account, not pulled; create the quote, then simulate the push with POST /sandbox/send (strict identifiers)',
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

export function checkPayerData(lookup: ReceiverLookup, info: Record<string, unknown> | undefined): void {
  const errors = new FieldErrors();
  for (const field of lookup.requiredPayerDataFields) {
    const value = info?.[field.name];
    if (field.mandatory && (value === undefined || value === null || value === '')) {
      errors.add(`senderCustomerInfo.${field.name}`, `is required by the receiver (lookup ${lookup.id})`);
    }
  }
  errors.throwIfAny();
}

export async function planDestination(tx: Tx, ctx: Ctx, input: QuoteInput): Promise<DestinationPlan> {
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
export async function planInternalDestination(
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

export function checkCurrencies(input: QuoteInput, sending: string, receiving: string): void {
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

export function convert(
  input: QuoteInput,
  sending: string,
  receiving: string,
  schedule: FeeSchedule,
  now: Date,
): Conversion {
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

export function checkLimits(config: StoredConfig, conversion: Conversion, lookup: ReceiverLookup | undefined): void {
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

/** A new challenge; it lasts SCA_CHALLENGE_TTL_MS, but never past the quote it authorizes. */
/**
 * A payment's SCA challenge: an SMS code by default, or the customer's passkey when the
 * execute asked for it (`passkey`: its assertion options over a fresh WebAuthn challenge).
 */
export function newChallenge(
  quoteExpiresAt: string,
  now: Date,
  passkey?: { challenge: string; options: Record<string, unknown> },
): ScaChallengeView {
  const expiresAt = iso(new Date(now.getTime() + SCA_CHALLENGE_TTL_MS));
  return {
    id: newId('ScaChallenge'),
    expiresAt: expiresAt < quoteExpiresAt ? expiresAt : quoteExpiresAt,
    factor: passkey !== undefined ? 'PASSKEY' : 'SMS_OTP',
    availableFactors: passkey !== undefined ? ['SMS_OTP', 'PASSKEY'] : ['SMS_OTP'],
    purpose: 'PAYOUT',
    ...(passkey !== undefined ? { passkeyAssertionOptions: passkey.options, passkeyChallenge: passkey.challenge } : {}),
  };
}
