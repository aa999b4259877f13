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
// Rates and fees come from src/rates; execution outcomes from the sandbox rail. How a payment
// starts (the accounts checked again, the rail's timeline, or the wait for SCA) is payment.ts.
//
// Strong Customer Authentication (customers whose address is in the EU or EEA): a
// real-time-funded quote starts in PENDING_AUTHORIZATION and authorizing it releases its
// payment instructions; executing an account-funded quote moves it to
// PENDING_AUTHORIZATION instead of paying, and authorizing it pays.

import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { runCommand, type Reply } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { apiError, FieldErrors, type FieldError } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { defineJob } from '../../jobs/queue.js';
import { openSystemAccounts } from '../../ledger/index.js';
import { checkQuoteSignature } from '../wallet-auth/actions.js';
import { decimalToNumber, decimalToString, parseDecimal, type Conversion } from '../../rates/index.js';
import {
  currencyObject,
  findInternalAccount,
  findOwnerAccountIn,
  type InternalAccountView,
} from '../internal-accounts/service.js';
import { findTransferCounterparty } from '../external-accounts/service.js';
import { readPlatformConfig } from '../platform/config.js';
import {
  expireQuoteTransaction,
  lockQuoteTransaction,
  moveQuoteAuthorization,
  openQuoteTransaction,
  writeOpenedQuoteTransaction,
  platformCustomerIdOf,
  presentTransaction,
  suspenseAccountId,
  type Conversion as TransactionConversion,
  type TransactionRow,
} from '../transactions/service.js';
import * as store from './store.js';
import {
  countFailedProof,
  failedProofError,
  requireScaSession,
  unlockedLoginState,
  verifyOperationProof,
} from '../sca/service.js';

import {
  newChallenge,
  type QuoteInput,
  checkCombinations,
  planSides,
  invalid,
  checkCurrencies,
  convert,
  feeSchedule,
  checkLimits,
  INSTANT_QUOTE_TTL_MS,
  STANDARD_QUOTE_TTL_MS,
  rateDetailsOf,
  realtimeNetwork,
  parseJson,
  type ScaChallengeView,
} from './planning.js';
import { pushInstructions, realtimeInstructions, walletInstructions, walletSigning } from './instructions.js';
import { checkExecutable, execute, executeOrChallenge, fundingOf, needsAuthorization } from './payment.js';

// ----------------------------------------------------------------------------- presenting

/** A stored challenge as shown: without the WebAuthn challenge kept to check the answer. */
function shownChallenge(challenge: ScaChallengeView) {
  const { passkeyChallenge: _kept, ...shown } = challenge;
  return shown;
}

/** The JSON columns of a quote as objects, for a quote written in this request (not parsed back from its row). */
export interface QuoteParts {
  source: Record<string, unknown>;
  destination: Record<string, unknown>;
  rateDetails: Record<string, number>;
}

export function presentQuote(row: store.QuoteRow, parts?: QuoteParts) {
  const instructions = parseJson<unknown[]>(row.payment_instructions);
  const challenge = parseJson<ScaChallengeView>(row.sca_challenge);
  return {
    id: row.id,
    status: row.status as 'PENDING',
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    source: parts?.source ?? (JSON.parse(row.source) as Record<string, unknown>),
    destination: parts?.destination ?? (JSON.parse(row.destination) as Record<string, unknown>),
    sendingCurrency: currencyObject(row.sending_currency),
    receivingCurrency: currencyObject(row.receiving_currency),
    totalSendingAmount: Number(row.sending_amount),
    totalReceivingAmount: Number(row.receiving_amount),
    exchangeRate: decimalToNumber(parseDecimal(row.exchange_rate)),
    feesIncluded: Number(row.fees),
    platformFeesIncluded: Number(row.platform_fees),
    // Absent fields are undefined values, which JSON leaves out (see presentTransaction).
    paymentInstructions: instructions,
    transactionId: row.transaction_id,
    rateDetails: parts?.rateDetails ?? (JSON.parse(row.rate_details) as Record<string, number>),
    scaChallenge:
      challenge !== undefined && row.status === 'PENDING_AUTHORIZATION' ? shownChallenge(challenge) : undefined,
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

/** A quote as shown, read through `q` (for a resource that embeds it). */
export async function presentQuoteById(q: Queryable, platformId: string, id: string) {
  const row = await store.findQuote(q, platformId, id);
  return row === undefined ? undefined : presentQuote(row);
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

/** The job that expires a quote left unexecuted (or unauthorized) at its `expires_at`. */
async function scheduleExpiry(tx: Tx, ctx: Ctx, quote: store.QuoteRow): Promise<void> {
  await quoteExpiryJob.schedule(tx, {
    platformId: ctx.platformId,
    payload: { quoteId: quote.id, transactionId: quote.transaction_id },
    dueAt: new Date(quote.expires_at),
    now: ctx.now,
  });
}

// ----------------------------------------------------------------------------- operations

export async function createQuote(
  ctx: Ctx,
  input: QuoteInput,
  idempotencyKey: string | undefined,
  schemaErrors: FieldError[] = [],
): Promise<Reply> {
  checkCombinations(input, schemaErrors);
  return runCommand(ctx, { operationId: 'createQuote', idempotencyKey, request: input }, async (tx) => {
    const executing = input.immediatelyExecute === true;
    const opened = await openQuote(tx, ctx, input, undefined, executing);
    let quote = opened.quote;
    if (executing) {
      quote = await executeOrChallenge(tx, ctx, quote, opened.transaction, {
        checked: true,
        fundsAccount: opened.fundsAccount,
        conversion: opened.conversion,
      });
      await writeOpenedQuoteTransaction(tx, opened.transaction);
      // Only a payment that has not started (it awaits its authorization) can still expire.
      if (quote.status === 'PENDING' || quote.status === 'PENDING_AUTHORIZATION') await scheduleExpiry(tx, ctx, quote);
    }
    return { status: opened.sca ? 202 : 201, body: presentQuote(quote, opened.parts) };
  });
}

/** A new quote, as its customer's agent asks for it: the accounts it names must be that customer's. */
export async function openCustomerQuote(tx: Tx, ctx: Ctx, input: QuoteInput, customerId: string) {
  return openQuote(tx, ctx, input, customerId);
}

/** Executes a quote opened in this transaction (its accounts were checked and locked then). */
export async function executeOpenedQuote(
  tx: Tx,
  ctx: Ctx,
  quote: store.QuoteRow,
  transaction: TransactionRow,
  fundsAccount?: InternalAccountView,
  conversion?: TransactionConversion,
) {
  return executeOrChallenge(tx, ctx, quote, transaction, { checked: true, fundsAccount, conversion });
}

/**
 * A customer-scoped quote (an agent's) names only that customer's accounts: another owner's
 * account is refused like an unknown one, before any check that would describe it.
 */
async function requireCustomerAccounts(tx: Tx, ctx: Ctx, customerId: string, input: QuoteInput): Promise<void> {
  const notTheirs = (field: string, id: string) => invalid(field, `names no account of customer ${customerId}: ${id}`);
  const check = async (field: string, id: string) => {
    const internal = await findInternalAccount(tx, ctx.platformId, id);
    if (internal !== undefined) {
      if (internal.customer_id !== customerId) throw notTheirs(field, id);
      return;
    }
    const external = await findTransferCounterparty(tx, ctx.platformId, id, false);
    if (external !== undefined && external.customerId !== customerId) throw notTheirs(field, id);
  };
  const { source, destination } = input;
  if (source.customerId !== undefined && source.customerId !== customerId) {
    throw invalid('source.customerId', `must be the agent's customer, ${customerId}`);
  }
  if (source.sourceType === 'ACCOUNT') await check('source.accountId', source.accountId);
  if (destination.destinationType === 'ACCOUNT') await check('destination.accountId', destination.accountId);
}

/**
 * Checks a quote request, then writes the quote, its transaction and its expiry (createQuote's
 * work). With `executing`, the transaction is written by the execution that follows in this
 * database transaction (openQuoteTransaction's `writeWithChange`), and the expiry is the
 * caller's to schedule, when the execution leaves something to expire.
 */
async function openQuote(tx: Tx, ctx: Ctx, input: QuoteInput, customerId?: string, executing = false) {
  if (customerId !== undefined) await requireCustomerAccounts(tx, ctx, customerId, input);
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
  const sca =
    source.funding === 'REALTIME_FUNDING' &&
    (await needsAuthorization(tx, ctx, source.customer, destination.destinationId));
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
    executing,
  );

  const quote: store.QuoteRow = {
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
          : // A pull at creation (immediatelyExecute) leaves nothing for the customer to send.
            source.external !== undefined && input.immediatelyExecute !== true
            ? JSON.stringify(pushInstructions(quoteId, conversion, source.external.id))
            : null,
    sca_challenge: sca ? JSON.stringify(newChallenge(iso(expiresAt), now)) : null,
    sender_customer_info: input.senderCustomerInfo !== undefined ? JSON.stringify(input.senderCustomerInfo) : null,
    expires_at: iso(expiresAt),
    created_at: iso(now),
    updated_at: iso(now),
    status: sca ? 'PENDING_AUTHORIZATION' : 'PENDING',
  };
  await store.insertQuote(tx, quote); // its columns: the status is the transaction's
  if (!executing) await scheduleExpiry(tx, ctx, quote);

  const parts: QuoteParts = { source: source.presented, destination: destination.presented, rateDetails };
  return { quote, transaction, sca, fundsAccount: source.internal, conversion: transactionConversion, parts };
}

/**
 * The wallet signature a quote funded from an embedded wallet needs before it executes,
 * checked before anything is written. (An expired or executed quote is refused as such
 * afterwards, not for its signature; so is an unknown one.)
 */
export async function requireQuoteSignature(ctx: Ctx, quoteId: string, walletSignature: string | undefined) {
  const found = await store.findQuote(ctx.db.k, ctx.platformId, quoteId);
  const signing = found !== undefined ? walletSigning(found) : undefined;
  if (signing !== undefined && found!.status === 'PENDING' && iso(ctx.now) < found!.expires_at) {
    await checkQuoteSignature(ctx, signing.accountId, signing.payloadToSign, walletSignature);
  }
}

/**
 * A quote locked for execution and checked: it exists (for `customerId`, only that
 * customer's), is paid from an account rather than in real time (and, in strict mode, not
 * from an external account: the hosted sandbox has such funds pushed, never pulled), and is
 * PENDING and unexpired (409).
 */
export async function lockExecutableQuote(tx: Tx, ctx: Ctx, quoteId: string, customerId?: string) {
  // The row lock is what makes a second, concurrent execute see PROCESSING.
  const { quote, transaction } = await loadQuoteForChange(tx, ctx, quoteId);
  if (customerId !== undefined && quote.customer_id !== customerId) throw quoteNotFound(quoteId);
  const funding = fundingOf(transaction);
  if (funding === 'REALTIME_FUNDING') {
    throw invalid(
      'quoteId',
      'names a real-time-funded quote: it executes when its payment instructions are paid (in the sandbox, POST /sandbox/send)',
    );
  }
  if (funding === 'EXTERNAL_ACCOUNT' && ctx.settings.strictIdentifiers === true) {
    throw invalid(
      'quoteId',
      `names a quote funded from the external account ${transaction.source_account_id}: its funds must be pushed from that account as the quote's paymentInstructions say, not pulled; in the sandbox, POST /sandbox/send simulates the push (strict identifiers)`,
    );
  }
  checkExecutable(quote, ctx.now, (message) => apiError('CONFLICT', message));
  return { quote, transaction };
}

/** Executes a quote lockExecutableQuote returned (or, in an SCA region, challenges it). */
export async function executeLockedQuote(tx: Tx, ctx: Ctx, quote: store.QuoteRow, transaction: TransactionRow) {
  return executeOrChallenge(tx, ctx, quote, transaction);
}

export async function executeQuote(
  ctx: Ctx,
  quoteId: string,
  body: { scaFactor?: string | undefined } | undefined,
  idempotencyKey: string | undefined,
  walletSignature?: string | undefined,
): Promise<Reply> {
  // A payment from an embedded wallet needs its holder's stamp; a refusal changes nothing.
  await requireQuoteSignature(ctx, quoteId, walletSignature);
  return runCommand(
    ctx,
    { operationId: 'executeQuote', idempotencyKey, request: { quoteId, body: body ?? {} }, conflictCode: 'CONFLICT' },
    async (tx) => {
      if (body?.scaFactor === 'TOTP') {
        await loadQuote(tx, ctx, quoteId);
        throw invalid(
          'scaFactor',
          'cannot be TOTP: a TOTP code cannot be bound to this payment; use SMS_OTP or PASSKEY',
        );
      }
      const { quote, transaction } = await lockExecutableQuote(tx, ctx, quoteId);
      const executed = await executeOrChallenge(tx, ctx, quote, transaction, { scaFactor: body?.scaFactor });
      return { status: 200, body: presentQuote(executed) };
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
  const outcome = await ctx.db.transaction(async (tx) => {
    const { quote, transaction } = await loadQuoteForChange(tx, ctx, quoteId);
    const challenge = parseJson<ScaChallengeView>(quote.sca_challenge);
    if (transaction.status !== 'PENDING_AUTHORIZATION' || challenge === undefined) {
      throw apiError('CONFLICT', `Quote ${quoteId} has no challenge to authorize (it is ${transaction.status})`);
    }
    // The expiry job may not have run yet; an expired quote is past authorizing all the same.
    if (iso(ctx.now) >= quote.expires_at)
      throw apiError('CONFLICT', `Quote ${quoteId} expired at ${quote.expires_at}; create a new quote`);
    errors.throwIfAny();
    // Money moves only within an SCA login session, and not while the login is locked.
    const customerId = quote.customer_id!;
    await requireScaSession(tx, ctx, customerId);
    const state = await unlockedLoginState(tx, ctx, customerId);
    if (iso(ctx.now) > challenge.expiresAt) {
      throw invalid(
        'code',
        `answers a challenge that expired at ${challenge.expiresAt}; an expired challenge cannot be authorized or renewed, so create a new quote`,
      );
    }
    // A payment's challenge takes the SMS code or, when issued for it, the passkey; never TOTP.
    const proof = await verifyOperationProof(tx, ctx, customerId, input, challenge.passkeyChallenge ?? null, [
      'SMS_OTP',
      'PASSKEY',
    ]);
    if (!proof.ok && proof.counts === false) throw invalid(proof.field, proof.message);
    if (!proof.ok) return { failed: { proof, state: await countFailedProof(tx, ctx, state) } };

    const source = JSON.parse(quote.source) as { sourceType: string; cryptoNetwork?: string };
    if (source.sourceType !== 'REALTIME_FUNDING') {
      // Funded from an account: the execute that asked for this authorization happens now,
      // straight from PENDING_AUTHORIZATION to PROCESSING.
      const authorized: store.QuoteRow = { ...quote, sca_challenge: null, updated_at: iso(ctx.now) };
      await store.saveQuoteState(tx, authorized);
      return { quote: presentQuote((await execute(tx, ctx, authorized, transaction, { authorized: true })).quote) };
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
    return { quote: presentQuote(authorized) };
  });
  if ('quote' in outcome) return outcome.quote;
  // A wrong proof counts against the login (committed before it is answered), as at login.
  throw failedProofError(outcome.failed.state, ctx.now, outcome.failed.proof);
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
  if (
    quote.status !== 'PENDING_AUTHORIZATION' ||
    challenge === undefined ||
    !challenge.availableFactors.includes('SMS_OTP')
  ) {
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

/**
 * Pays a quote's instructions, as the payer's bank would: a real-time-funded quote, or one
 * funded from an external bank account (the customer's push from that account). The quote's
 * payment then starts as an execute starts it; the amount that arrived is checked there.
 */
export async function sandboxSend(ctx: Ctx, input: SandboxSendInput) {
  return ctx.db.transaction(async (tx) => {
    const { quote, transaction } = await loadQuoteForChange(tx, ctx, input.quoteId);
    const funding = fundingOf(transaction);
    if (funding === 'INTERNAL_ACCOUNT') {
      throw invalid(
        'quoteId',
        'names a quote funded from an internal account: execute it with POST /quotes/{quoteId}/execute',
      );
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
    const pushed = funding === 'EXTERNAL_ACCOUNT';
    return presentTransaction((await execute(tx, ctx, quote, transaction, { paidAmount: paid, pushed })).transaction);
  });
}

export { getExchangeRates } from './exchange-rates.js';
export { checkCombinations as checkQuoteRequest } from './planning.js';
export type { QuoteInput } from './planning.js';
