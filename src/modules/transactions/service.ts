// Transactions: the record of every movement to or from an external account, its state
// machine, and the rail timeline that drives it. Each transition changes the status and
// its timestamp, posts to the ledger and records its events in one database transaction.
//
//   OUTGOING  PROCESSING --complete--> COMPLETED --return--> FAILED (PAYOUT_RETURNED, refund)
//             PROCESSING --fail------> FAILED (failureReason; hold released)
//             PROCESSING --cancel----> COMPLETED (hold released, refund USER_CANCELLATION; events
//                                      REFUND_PENDING, REFUND_COMPLETED, COMPLETED, the reference's
//                                      sequence for a cancelled payment: no failure reason fits it)
//   INCOMING  PENDING    --complete--> COMPLETED
//             PENDING    --fail------> FAILED (failureReason)
//             PENDING    --cancel----> FAILED (COLLECTION_FAILED)
//             PENDING    --reject----> REJECTED (the platform declined it; pending credit released)
//
// Incoming UMA payments ask the platform first (payment-approvals): the pending credit is
// held while it decides (or, for a payment to the customer's default UMA deposit account,
// the money waits in SUSPENSE); its decision arrives through the hooks registered at the
// end of this file.
//
// A cross-currency quote's transaction (OUTGOING, with a `conversion`) exists from the
// quote's creation and its status is the quote's:
//             PENDING_AUTHORIZATION --authorize--> PENDING (real-time funding: waits for the funds)
//                                               or PROCESSING (an account-funded execute that waited)
//             PENDING --expire--> EXPIRED; PENDING_AUTHORIZATION --expire--> FAILED (SCA_NOT_COMPLETED)
//             PENDING --execute / funds received--> PROCESSING, then as above; completing
//             converts the funds and pays the receiver; failing releases or refunds them.

import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { recordEvents, type EventInput } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import { apiError } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { defineJob } from '../../jobs/queue.js';
import { openBooks, systemAccountId, type Books, type ConversionLegs, type Funds } from '../../ledger/index.js';
import type { QuotePayout, RailOutcome, TimelineStep } from '../../rails/index.js';
import { findCustomer } from '../customers/store.js';
import { findTransferCounterparty } from '../external-accounts/service.js';
import { money, recordBalanceUpdates, type InternalAccountView } from '../internal-accounts/service.js';
import {
  requestIncomingPaymentApproval,
  setIncomingPaymentHooks,
  type CounterpartyField,
  type DecisionInput,
  type IncomingPaymentHooks,
} from '../payment-approvals/service.js';
import type { IncomingTransactionView } from '../payment-approvals/schemas.js';
import { UMA_PENDING_LONG_MS, type UmaScenario } from '../../sandbox/magic.js';
import * as store from './store.js';

export type { TransactionRow } from './store.js';

// ----------------------------------------------------------------------------- customers

/** The platform's id for a customer, recorded on its transactions; null for the platform's own. */
export async function platformCustomerIdOf(
  q: Queryable,
  platformId: string,
  customerId: string | null,
): Promise<string | null> {
  if (customerId === null) return null;
  return (await findCustomer(q, platformId, customerId))?.platform_customer_id ?? null;
}

// ----------------------------------------------------------------------------- presenting

interface Details {
  remittanceInformation?: string;
  purposeOfPayment?: string;
  cancellationReason?: string;
  /** Incoming UMA payments: who sent it, what the sender disclosed, the sandbox scenario. */
  senderUmaAddress?: string;
  counterpartyInformation?: Record<string, unknown>;
  umaScenario?: UmaScenario;
  /** Set while a pending payment waits for something (TransactionPendingReason). */
  pendingReason?: 'COUNTERPARTY_INFORMATION_REQUIRED';
  /** What the platform told about its customer when approving. */
  receiverCustomerInfo?: Record<string, unknown>;
}

/**
 * The cross-currency side of a quote's transaction. The row's currency and amount are the
 * sending side (fees included); `internal_account_id` is where the funds are held: the
 * source internal account, or the ledger's SUSPENSE account of the sending currency when
 * the money comes from outside (real-time funding, a pull from an external account).
 */
export interface Conversion {
  quoteId: string;
  funding: 'INTERNAL_ACCOUNT' | 'EXTERNAL_ACCOUNT' | 'REALTIME_FUNDING';
  /** Real-time funding: the customer paying (absent when the platform pays). */
  sourceCustomerId?: string;
  receivingCurrency: string;
  receivingAmount: string;
  exchangeRate: number;
  fees: string;
  platformFees: string;
  /** The platform's internal account in the sending currency, which the platform's fees are settled to. */
  platformFeeAccountId: string | null;
  rateDetails: Record<string, number>;
  destinationType: 'ACCOUNT' | 'UMA_ADDRESS';
  /** What decides the payout's sandbox outcome (the rail plans it at execution). */
  payout: QuotePayout;
  description?: string;
}

const NO_DETAILS = '{}';

function conversionOf(row: store.TransactionRow): Conversion | undefined {
  return row.conversion === null ? undefined : (JSON.parse(row.conversion) as Conversion);
}

function detailsOf(row: store.TransactionRow): Details {
  return row.details === NO_DETAILS ? {} : (JSON.parse(row.details) as Details);
}

export interface RefundView {
  reference: string;
  initiatedAt: string;
  settledAt?: string;
  status: 'PENDING' | 'COMPLETED' | 'FAILED';
  reason: 'TRANSACTION_FAILED' | 'USER_CANCELLATION' | 'TIMEOUT';
}

export function presentTransaction(row: store.TransactionRow) {
  const amount = money(BigInt(row.amount), row.currency);
  const details = detailsOf(row);
  // The platform's own transactions name the platform as their customer (the reference's
  // listTransactions filters them with customerId = the platform id).
  const common = {
    id: row.id,
    direction: row.type === 'OUTGOING' ? ('DEBIT' as const) : ('CREDIT' as const),
    source: { sourceType: 'ACCOUNT' as const, accountId: row.source_account_id, currency: row.currency },
    destination: { destinationType: 'ACCOUNT' as const, accountId: row.destination_account_id, currency: row.currency },
    customerId: row.customer_id ?? row.platform_id,
    platformCustomerId: row.customer_id === null ? row.platform_id : (row.platform_customer_id ?? ''),
    ...(row.settled_at !== null ? { settledAt: row.settled_at } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.receipt_delivery_confirmed_at !== null
      ? { receiptDeliveryConfirmedAt: row.receipt_delivery_confirmed_at }
      : {}),
    sentAmount: amount,
    receivedAmount: amount,
    exchangeRate: 1,
    ...(row.refund !== null ? { refund: JSON.parse(row.refund) as RefundView } : {}),
    fees: 0,
    reconciliationInstructions: { reference: row.reference },
  };
  if (row.type === 'INCOMING') {
    return {
      ...common,
      ...(details.senderUmaAddress !== undefined
        ? {
            source: {
              sourceType: 'UMA_ADDRESS' as const,
              umaAddress: details.senderUmaAddress,
              currency: row.currency,
            } as unknown as typeof common.source,
          }
        : {}),
      ...(details.pendingReason !== undefined && row.status === 'PENDING'
        ? { pendingReason: details.pendingReason }
        : {}),
      ...(details.counterpartyInformation !== undefined
        ? { counterpartyInformation: details.counterpartyInformation }
        : {}),
      status: row.status as 'PENDING',
      type: 'INCOMING' as const,
      ...(row.failure_reason !== null ? { failureReason: row.failure_reason as 'COLLECTION_FAILED' } : {}),
    };
  }
  const conversion = conversionOf(row);
  return {
    ...common,
    ...(conversion !== undefined ? presentConversion(row, conversion) : {}),
    status: row.status as 'PROCESSING',
    type: 'OUTGOING' as const,
    platformFees: conversion !== undefined ? Number(conversion.platformFees) : 0,
    ...(row.failure_reason !== null ? { failureReason: row.failure_reason as 'ACCOUNT_INVALID' } : {}),
    paymentRail: row.payment_rail as 'ACH' | null,
    railSelectionMode: row.rail_selection_mode as 'AUTO' | null,
  };
}

/** The fields a conversion changes in an outgoing transaction's presentation. */
function presentConversion(row: store.TransactionRow, conversion: Conversion) {
  const source =
    conversion.funding === 'REALTIME_FUNDING'
      ? {
          sourceType: 'REALTIME_FUNDING' as const,
          currency: row.currency,
          ...(conversion.sourceCustomerId ? { customerId: conversion.sourceCustomerId } : {}),
        }
      : { sourceType: 'ACCOUNT' as const, accountId: row.source_account_id, currency: row.currency };
  const destination =
    conversion.destinationType === 'UMA_ADDRESS'
      ? {
          destinationType: 'UMA_ADDRESS' as const,
          umaAddress: row.destination_account_id,
          currency: conversion.receivingCurrency,
        }
      : {
          destinationType: 'ACCOUNT' as const,
          accountId: row.destination_account_id,
          currency: conversion.receivingCurrency,
        };
  return {
    source: source as unknown as { sourceType: 'ACCOUNT'; accountId: string; currency: string },
    destination: destination as unknown as { destinationType: 'ACCOUNT'; accountId: string; currency: string },
    receivedAmount: money(BigInt(conversion.receivingAmount), conversion.receivingCurrency),
    exchangeRate: conversion.exchangeRate,
    fees: Number(conversion.fees),
    quoteId: conversion.quoteId,
    rateDetails: conversion.rateDetails,
    ...(conversion.description !== undefined ? { description: conversion.description } : {}),
  };
}

export type TransactionView = ReturnType<typeof presentTransaction>;

// ----------------------------------------------------------------------------- transitions

/**
 * The work of one change to a transaction: its ledger postings and its events, kept in
 * memory while the transitions run and written by finish() (the row by the caller), so a
 * transfer that passes through several states still costs a handful of statements.
 */
interface Work {
  tx: Queryable;
  platformId: string;
  books: Books;
  events: EventInput[];
  now: Date;
  /** Internal accounts read earlier in this transaction (their balance events need not read them again). */
  accounts?: InternalAccountView[];
  /** The row of the last event and the view it carries; see viewOf. */
  last?: { row: store.TransactionRow; view: TransactionView };
}

function openWork(tx: Queryable, platformId: string, now: Date): Work {
  return { tx, platformId, books: openBooks(tx, platformId, now), events: [], now };
}

/** The transaction as a response shows it: the last event's view when that event is of this very row. */
function viewOf(work: Work, row: store.TransactionRow): TransactionView {
  return work.last?.row === row ? work.last.view : presentTransaction(row);
}

/** A payment that failed or expired, as the areas that hang state on payments hear of it. */
export interface PaymentFailure {
  platformId: string;
  transactionId: string;
  /** The quote the payment executes, for a quote's payment. */
  quoteId?: string | undefined;
  status: 'FAILED' | 'EXPIRED';
  failureReason: string | null;
  now: Date;
}

type PaymentFailureListener = (tx: Queryable, failure: PaymentFailure) => Promise<void>;
const paymentFailureListeners: PaymentFailureListener[] = [];

/** Runs `listener` in the database transaction that makes any payment fail or expire. */
export function onPaymentFailure(listener: PaymentFailureListener): void {
  paymentFailureListeners.push(listener);
}

/** Writes the postings and balances, then every event in the order the transitions made them. */
async function finish(work: Work): Promise<void> {
  await recordBalanceUpdates(work.tx, work.platformId, work.books, work.now, work.events, work.accounts);
  await recordEvents(work.tx, work.events);
  if (paymentFailureListeners.length === 0) return;
  for (const event of work.events) {
    const status = event.type.endsWith('.FAILED') ? 'FAILED' : event.type.endsWith('.EXPIRED') ? 'EXPIRED' : null;
    if (status === null) continue;
    const view = event.data as { quoteId?: string; failureReason?: string };
    const failure: PaymentFailure = {
      platformId: event.platformId,
      transactionId: event.resourceId,
      quoteId: view.quoteId,
      status,
      failureReason: view.failureReason ?? null,
      now: work.now,
    };
    for (const listener of paymentFailureListeners) await listener(work.tx, failure);
  }
}

function emit(work: Work, row: store.TransactionRow, event: string): void {
  const prefix = row.type === 'OUTGOING' ? 'OUTGOING_PAYMENT' : 'INCOMING_PAYMENT';
  const view = presentTransaction(row);
  work.last = { row, view };
  work.events.push({
    platformId: row.platform_id,
    type: `${prefix}.${event}`,
    resourceId: row.id,
    data: view,
    now: work.now,
  });
}

function amountOf(row: store.TransactionRow): bigint {
  return BigInt(row.amount);
}

function next(work: Work, row: store.TransactionRow, changes: Partial<store.TransactionState>): store.TransactionRow {
  return { ...row, ...changes, updated_at: iso(work.now) };
}

// Where an outgoing payment's money is, and the two legs of its conversion.

function fundsOf(row: store.TransactionRow, conversion: Conversion): Funds {
  return {
    accountId: row.internal_account_id,
    bucket: conversion.funding === 'INTERNAL_ACCOUNT' ? 'HELD' : 'AVAILABLE',
  };
}

function legsOf(row: store.TransactionRow, conversion: Conversion): ConversionLegs {
  return {
    sendingCurrency: row.currency,
    sendingAmount: amountOf(row),
    fees: BigInt(conversion.fees),
    platformFees: BigInt(conversion.platformFees),
    platformFeeAccountId: conversion.platformFeeAccountId,
    receivingCurrency: conversion.receivingCurrency,
    receivingAmount: BigInt(conversion.receivingAmount),
    payoutAccountId: conversion.payout.destinationType === 'INTERNAL_ACCOUNT' ? conversion.payout.accountId : null,
  };
}

/** An outgoing payment that will not complete gives its funds back: released, or refunded to an outside payer. */
async function releaseOutgoing(work: Work, row: store.TransactionRow): Promise<void> {
  const conversion = conversionOf(row);
  if (conversion !== undefined && conversion.funding !== 'INTERNAL_ACCOUNT')
    await work.books.refundExternally(row.currency, amountOf(row), row.id);
  else await work.books.release(row.internal_account_id, row.currency, amountOf(row), row.id);
}

/**
 * An incoming payment deposited in an external account (the customer's default UMA deposit
 * account) has that account as its destination instead of the internal account, and its
 * money waits in SUSPENSE rather than as a pending credit of the internal account.
 */
function depositsExternally(row: store.TransactionRow): boolean {
  return row.type === 'INCOMING' && row.destination_account_id !== row.internal_account_id;
}

/** An incoming payment will not complete: its pending credit (or the money in SUSPENSE) goes back to the sender. */
async function returnIncoming(work: Work, row: store.TransactionRow): Promise<void> {
  if (depositsExternally(row)) await work.books.refundExternally(row.currency, amountOf(row), row.id);
  else await work.books.failIncoming(row.internal_account_id, row.currency, amountOf(row), row.id);
}

/** The rail completed the payment: outgoing funds leave the held bucket, incoming ones become available (or are passed on). */
async function complete(work: Work, row: store.TransactionRow): Promise<store.TransactionRow> {
  const conversion = conversionOf(row);
  if (conversion !== undefined)
    await work.books.convertAndPayOut(fundsOf(row, conversion), legsOf(row, conversion), row.id);
  else if (row.type === 'OUTGOING')
    await work.books.settle(row.internal_account_id, row.currency, amountOf(row), row.id);
  else if (depositsExternally(row)) {
    // The deposit account was chosen when the payment arrived; it may have been deleted or
    // stopped being usable while the payment waited for approval. Then the money cannot be
    // passed on, and goes back to the sender: a payment accepted, then failed, is refunded.
    const destination = await findTransferCounterparty(work.tx, row.platform_id, row.destination_account_id, true);
    if (destination?.status !== 'ACTIVE')
      return refund(work, await fail(work, row, 'OFFRAMP_FAILED'), 'TRANSACTION_FAILED');
    await work.books.forwardExternally(row.currency, amountOf(row), row.id);
  } else await work.books.completeIncoming(row.internal_account_id, row.currency, amountOf(row), row.id);
  const completed = next(work, row, { status: 'COMPLETED', settled_at: iso(work.now) });
  emit(work, completed, 'COMPLETED');
  return completed;
}

/** The rail failed the payment before completion: whatever was held or pending goes back. */
async function fail(work: Work, row: store.TransactionRow, failureReason: string): Promise<store.TransactionRow> {
  if (row.type === 'OUTGOING') {
    // Money received from outside for a conversion can only go back by a refund.
    const conversion = conversionOf(row);
    if (conversion !== undefined && conversion.funding !== 'INTERNAL_ACCOUNT')
      return failWithRefund(work, row, failureReason, 'COMPLETED');
    await releaseOutgoing(work, row);
  } else {
    await returnIncoming(work, row);
  }
  const failed = next(work, row, { status: 'FAILED', failure_reason: failureReason });
  emit(work, failed, 'FAILED');
  return failed;
}

/** A payout failed and the payer is refunded; when the refund fails too, the funds wait in SUSPENSE. */
async function failWithRefund(
  work: Work,
  row: store.TransactionRow,
  failureReason: string,
  refundOutcome: 'COMPLETED' | 'FAILED',
): Promise<store.TransactionRow> {
  const failed = next(work, row, { status: 'FAILED', failure_reason: failureReason });
  emit(work, failed, 'FAILED');
  if (refundOutcome === 'COMPLETED') {
    await releaseOutgoing(work, row);
    return refund(work, failed, 'TRANSACTION_FAILED');
  }
  const conversion = conversionOf(row);
  if (conversion !== undefined) await work.books.strand(fundsOf(row, conversion), row.currency, amountOf(row), row.id);
  else await work.books.release(row.internal_account_id, row.currency, amountOf(row), row.id);
  return refund(work, failed, 'TRANSACTION_FAILED', 'FAILED');
}

function refundReference(row: store.TransactionRow): string {
  return `${row.reference}-R`;
}

/** Records a refund that the sandbox settles (or fails) at once: REFUND_PENDING, then REFUND_COMPLETED or REFUND_FAILED. */
function refund(
  work: Work,
  row: store.TransactionRow,
  reason: RefundView['reason'],
  outcome: 'COMPLETED' | 'FAILED' = 'COMPLETED',
): store.TransactionRow {
  const pending: RefundView = {
    reference: refundReference(row),
    initiatedAt: iso(work.now),
    status: 'PENDING',
    reason,
  };
  const initiated = next(work, row, { refund: JSON.stringify(pending) });
  emit(work, initiated, 'REFUND_PENDING');
  const ended: RefundView =
    outcome === 'COMPLETED'
      ? { ...pending, settledAt: iso(work.now), status: 'COMPLETED' }
      : { ...pending, status: 'FAILED' };
  const settled = next(work, initiated, { refund: JSON.stringify(ended) });
  emit(work, settled, outcome === 'COMPLETED' ? 'REFUND_COMPLETED' : 'REFUND_FAILED');
  return settled;
}

/** A completed outgoing payment came back from the receiving bank: reverse it, fail it, refund it. */
async function markReturned(
  work: Work,
  row: store.TransactionRow,
  failureReason: string,
): Promise<store.TransactionRow> {
  const conversion = conversionOf(row);
  if (conversion === undefined) {
    await work.books.reverseSettlement(row.internal_account_id, row.currency, amountOf(row), row.id);
  } else {
    // The conversion is undone into where the funds came from; money from outside goes back out.
    await work.books.reverseConversion(
      { accountId: row.internal_account_id, bucket: 'AVAILABLE' },
      legsOf(row, conversion),
      row.id,
    );
    if (conversion.funding !== 'INTERNAL_ACCOUNT')
      await work.books.refundExternally(row.currency, amountOf(row), row.id);
  }
  const failed = next(work, row, { status: 'FAILED', failure_reason: failureReason });
  emit(work, failed, 'FAILED');
  return refund(work, failed, 'TRANSACTION_FAILED');
}

/**
 * The payment was cancelled before it settled (the platform's cancel, or the sandbox's user
 * cancellation): the hold (or pending credit) is undone. An outgoing payment is refunded to
 * its payer and then closed as COMPLETED, with the refund (reason USER_CANCELLATION) saying
 * what happened: the reference's webhook sequence for a cancellation, and no failure reason
 * of the reference describes one.
 */
async function cancel(
  work: Work,
  row: store.TransactionRow,
  reason: string | undefined,
): Promise<store.TransactionRow> {
  const details: Details = {
    ...(JSON.parse(row.details) as Details),
    ...(reason !== undefined ? { cancellationReason: reason } : {}),
  };
  const withReason = { ...row, details: JSON.stringify(details) };
  if (row.type === 'INCOMING') return fail(work, withReason, 'COLLECTION_FAILED');
  await releaseOutgoing(work, row);
  const refunded = refund(work, withReason, 'USER_CANCELLATION');
  const closed = next(work, refunded, { status: 'COMPLETED' });
  emit(work, closed, 'COMPLETED');
  return closed;
}

/** The state a rail outcome applies to; any other state means the outcome is stale (cancelled before it arrived). */
function awaitsOutcome(row: store.TransactionRow, outcome: RailOutcome): boolean {
  const pending = row.type === 'OUTGOING' ? 'PROCESSING' : 'PENDING';
  // A cancelled payment is COMPLETED too, but it was refunded: nothing of it can come back.
  if (outcome.kind === 'RETURNED') return row.type === 'OUTGOING' && row.status === 'COMPLETED' && row.refund === null;
  return row.status === pending;
}

async function applyOutcome(
  work: Work,
  row: store.TransactionRow,
  outcome: RailOutcome,
): Promise<store.TransactionRow> {
  if (!awaitsOutcome(row, outcome)) return row;
  switch (outcome.kind) {
    case 'COMPLETED':
      return complete(work, row);
    case 'FAILED':
      return outcome.refund === undefined
        ? fail(work, row, outcome.failureReason)
        : failWithRefund(work, row, outcome.failureReason, outcome.refund);
    case 'RETURNED':
      return markReturned(work, row, outcome.failureReason);
    case 'CANCELLED':
      return cancel(work, row, undefined);
  }
}

/** Applies the outcomes due now and schedules the later ones; answers the row as the outcomes due now leave it. */
async function playTimeline(
  tx: Tx,
  work: Work,
  row: store.TransactionRow,
  timeline: TimelineStep[],
): Promise<store.TransactionRow> {
  let current = row;
  for (const step of timeline) {
    if (step.afterMs === 0) {
      current = await applyOutcome(work, current, step.outcome);
    } else {
      await railStepJob.schedule(tx, {
        platformId: row.platform_id,
        payload: { transactionId: row.id, outcome: step.outcome },
        dueAt: new Date(work.now.getTime() + step.afterMs),
        now: work.now,
      });
    }
  }
  return current;
}

// ----------------------------------------------------------------------------- rail timeline

export interface RailStepPayload {
  transactionId: string;
  outcome: RailOutcome;
}

/** A rail outcome due later; carried out in its own transaction when the platform's clock reaches it. */
export const railStepJob = defineJob<RailStepPayload>('rail.outcome', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    // Locked: a cancel or another outcome of this transaction waits, then sees this one's result.
    const row = await store.lockTransaction(tx, job.platformId, job.payload.transactionId);
    if (row === undefined) throw new Error(`transaction ${job.payload.transactionId} does not exist`);
    const work = openWork(tx, job.platformId, ctx.now);
    const after = await applyOutcome(work, row, job.payload.outcome);
    if (after !== row) await store.saveState(tx, after);
    await finish(work);
  },
});

export interface NewTransfer {
  type: 'INCOMING' | 'OUTGOING';
  platformId: string;
  customerId: string | null;
  platformCustomerId: string | null;
  internalAccountId: string;
  externalAccountId: string;
  currency: string;
  amount: bigint;
  paymentRail: string | null;
  railSelectionMode: 'AUTO' | 'MANUAL' | null;
  details: Details;
  /** The internal account as read at the start of this transaction, when the caller has it. */
  internalAccount?: InternalAccountView;
}

function referenceFor(id: string): string {
  // The uuid's random tail: unique, and short enough for a bank statement.
  return `RY${id.replace(/-/g, '').slice(-12).toUpperCase()}`;
}

/** The columns a new transaction fills itself: no outcome yet, timestamps now, its reference. */
type NewRowFields = Omit<
  store.TransactionRow,
  | 'failure_reason'
  | 'refund'
  | 'reference'
  | 'settled_at'
  | 'receipt_delivery_confirmed_at'
  | 'created_at'
  | 'updated_at'
  | 'conversion'
> & {
  conversion?: string | null;
};

function newRow(fields: NewRowFields, now: Date): store.TransactionRow {
  const at = iso(now);
  return {
    conversion: null,
    ...fields,
    failure_reason: null,
    refund: null,
    reference: referenceFor(fields.id),
    settled_at: null,
    receipt_delivery_confirmed_at: null,
    created_at: at,
    updated_at: at,
  };
}

/**
 * Accepts a transfer in the caller's transaction: funds are held (outgoing; throws
 * InsufficientFunds when they fall short) or shown as pending (incoming), the transaction
 * and its first event are written, then the rail's timeline starts: outcomes due at once
 * are applied here, later ones are scheduled.
 */
export async function startTransfer(
  tx: Tx,
  input: NewTransfer,
  timeline: TimelineStep[],
  now: Date,
): Promise<TransactionView> {
  const id = newId('Transaction');
  const work = openWork(tx, input.platformId, now);
  if (input.internalAccount !== undefined) work.accounts = [input.internalAccount];
  // Funds first: a transfer that cannot be covered writes nothing.
  if (input.type === 'OUTGOING') await work.books.hold(input.internalAccountId, input.currency, input.amount, id);
  else await work.books.acceptIncoming(input.internalAccountId, input.currency, input.amount, id);

  let row: store.TransactionRow = newRow(
    {
      id,
      platform_id: input.platformId,
      type: input.type,
      status: input.type === 'OUTGOING' ? 'PROCESSING' : 'PENDING',
      customer_id: input.customerId,
      platform_customer_id: input.platformCustomerId,
      internal_account_id: input.internalAccountId,
      external_account_id: input.externalAccountId,
      source_account_id: input.type === 'OUTGOING' ? input.internalAccountId : input.externalAccountId,
      destination_account_id: input.type === 'OUTGOING' ? input.externalAccountId : input.internalAccountId,
      currency: input.currency,
      amount: input.amount.toString(),
      payment_rail: input.paymentRail,
      rail_selection_mode: input.railSelectionMode,
      details: JSON.stringify(input.details),
    },
    now,
  );
  emit(work, row, row.status);
  row = await playTimeline(tx, work, row, timeline);
  // The row is written once, in the state the outcomes due now left it in.
  await store.insertTransaction(tx, row);
  await finish(work);
  return viewOf(work, row);
}

// ----------------------------------------------------------------------------- operations

function notFound(id: string) {
  return apiError('TRANSACTION_NOT_FOUND', `No transaction ${id}`);
}

async function load(q: Queryable, ctx: Ctx, id: string): Promise<store.TransactionRow> {
  const row = await store.findTransaction(q, ctx.platformId, id);
  if (row === undefined) throw notFound(id);
  return row;
}

/** load(), holding the row lock (PostgreSQL) until the caller's transaction ends, for a change. */
async function loadForChange(tx: Tx, ctx: Ctx, id: string): Promise<store.TransactionRow> {
  const row = await store.lockTransaction(tx, ctx.platformId, id);
  if (row === undefined) throw notFound(id);
  return row;
}

/** A transaction as shown, read through `q` (for a resource that embeds it). */
export async function presentTransactionById(q: Queryable, platformId: string, id: string) {
  const row = await store.findTransaction(q, platformId, id);
  return row === undefined ? undefined : presentTransaction(row);
}

export async function getTransactionById(ctx: Ctx, id: string) {
  return presentTransaction(await load(ctx.db.k, ctx, id));
}

/** A transaction of one customer (an agent's view): another customer's does not exist here. */
export async function getCustomerTransaction(ctx: Ctx, id: string, customerId: string) {
  const row = await load(ctx.db.k, ctx, id);
  if (row.customer_id !== customerId) throw notFound(id);
  return presentTransaction(row);
}

export interface ListTransactionsQuery extends PageRequest {
  customerId?: string | undefined;
  platformCustomerId?: string | undefined;
  accountIdentifier?: string | undefined;
  senderAccountIdentifier?: string | undefined;
  receiverAccountIdentifier?: string | undefined;
  status?: string | undefined;
  type?: string | undefined;
  reference?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
}

export async function listTransactions(ctx: Ctx, query: ListTransactionsQuery) {
  const { customerId, platformCustomerId, limit, cursor, sortOrder, ...rest } = query;
  const filters: store.TransactionFilters = { ...rest };
  // The platform's own transactions answer to the platform id, under either name.
  if (customerId !== undefined) filters.customerId = customerId === ctx.platformId ? null : customerId;
  if (platformCustomerId !== undefined) {
    if (platformCustomerId === ctx.platformId) {
      if (filters.customerId !== undefined && filters.customerId !== null)
        return toPage({ rows: [], hasMore: false, totalCount: 0 }, presentTransaction);
      filters.customerId = null;
    } else {
      filters.platformCustomerId = platformCustomerId;
    }
  }
  const page = await store.listTransactions(ctx.db.k, ctx.platformId, filters, { limit, cursor, sortOrder });
  return toPage(page, presentTransaction);
}

/** Records when the platform delivered the receipt (now when not given); a repeat overwrites it. */
export async function confirmReceiptDelivery(ctx: Ctx, id: string, confirmedAt: string | undefined) {
  const at = confirmedAt === undefined ? iso(ctx.now) : new Date(confirmedAt).toISOString();
  if (at > iso(ctx.now)) {
    throw apiError('INVALID_INPUT', 'receiptDeliveryConfirmedAt cannot be in the future', {
      errors: [{ field: 'receiptDeliveryConfirmedAt', message: `must not be later than now (${iso(ctx.now)})` }],
    });
  }
  return ctx.db.transaction(async (tx) => {
    const row = await loadForChange(tx, ctx, id);
    const confirmed = { ...row, receipt_delivery_confirmed_at: at, updated_at: iso(ctx.now) };
    await store.saveState(tx, confirmed);
    return presentTransaction(confirmed);
  });
}

/** Rails whose transfers a bank can still stop before they settle (ACH pushes and pulls, wires). */
const CANCELLABLE_RAILS = new Set(['ACH', 'WIRE']);

/**
 * Cancels a pending bank transfer. Checks in order: the transaction exists (404); it moves
 * over a cancellable bank rail (400 otherwise); it has not settled or failed (409).
 */
export async function cancelTransaction(ctx: Ctx, id: string, reason: string | undefined) {
  return ctx.db.transaction(async (tx) => {
    const row = await loadForChange(tx, ctx, id);
    if (row.payment_rail === null || !CANCELLABLE_RAILS.has(row.payment_rail)) {
      throw apiError(
        'INVALID_INPUT',
        `Only pending ACH and wire transfers can be cancelled; this transaction moves over ${row.payment_rail ?? 'no bank rail'}`,
        {
          errors: [{ field: 'transactionId', message: 'is not a bank transfer that can be cancelled' }],
        },
      );
    }
    const pending = row.type === 'OUTGOING' ? 'PROCESSING' : 'PENDING';
    if (row.status !== pending) {
      throw apiError(
        'TRANSACTION_NOT_CANCELLABLE',
        `Transaction ${id} is ${row.status} and can no longer be cancelled`,
        { status: row.status },
      );
    }
    const work = openWork(tx, ctx.platformId, ctx.now);
    const cancelled = await cancel(work, row, reason);
    await store.saveState(tx, cancelled);
    await finish(work);
    return viewOf(work, cancelled);
  });
}

// ----------------------------------------------------------------------------- incoming UMA payments

export interface NewIncomingUmaPayment {
  platformId: string;
  customerId: string;
  platformCustomerId: string | null;
  internalAccountId: string;
  currency: string;
  amount: bigint;
  senderUmaAddress: string;
  counterpartyInformation: Record<string, unknown>;
  scenario: UmaScenario;
  /** Receiver fields the platform must return when it approves (none for sandbox payments). */
  requestedReceiverCustomerInfoFields?: CounterpartyField[];
  /** The external account to deposit in instead of the internal account (see depositsExternally). */
  depositAccountId?: string | undefined;
}

function asIncomingView(row: store.TransactionRow): IncomingTransactionView {
  return presentTransaction(row) as unknown as IncomingTransactionView;
}

/**
 * Accepts an incoming UMA payment in the caller's transaction: the amount is credited as
 * pending (HELD; throws BalanceLimitExceeded past the maximum), or received into SUSPENSE
 * when it is bound for `depositAccountId`; the transaction is written in PENDING, and the
 * platform is asked to approve it. A sender that fails compliance fails the
 * payment at once instead, before anyone is asked. Answers the transaction as it is when the
 * caller's transaction commits (already COMPLETED when the platform has no webhook endpoint).
 */
export async function receiveUmaPayment(tx: Tx, input: NewIncomingUmaPayment, now: Date): Promise<TransactionView> {
  const id = newId('Transaction');
  const work = openWork(tx, input.platformId, now);
  if (input.depositAccountId !== undefined) await work.books.receiveFunding(input.currency, input.amount, id);
  else await work.books.acceptIncoming(input.internalAccountId, input.currency, input.amount, id);
  const details: Details = {
    senderUmaAddress: input.senderUmaAddress,
    counterpartyInformation: input.counterpartyInformation,
    umaScenario: input.scenario,
  };
  let row: store.TransactionRow = newRow(
    {
      id,
      platform_id: input.platformId,
      type: 'INCOMING',
      status: 'PENDING',
      customer_id: input.customerId,
      platform_customer_id: input.platformCustomerId,
      internal_account_id: input.internalAccountId,
      // The sender stands where a transfer has its external account (filters read these columns).
      external_account_id: input.senderUmaAddress,
      source_account_id: input.senderUmaAddress,
      destination_account_id: input.depositAccountId ?? input.internalAccountId,
      currency: input.currency,
      amount: input.amount.toString(),
      payment_rail: null,
      rail_selection_mode: null,
      details: JSON.stringify(details),
    },
    now,
  );
  if (input.scenario === 'FAIL_COMPLIANCE') row = await fail(work, row, 'COMPLIANCE_REJECTED');
  await store.insertTransaction(tx, row);
  await finish(work);
  if (row.status !== 'PENDING') return presentTransaction(row);

  const asked = await requestIncomingPaymentApproval(tx, {
    platformId: input.platformId,
    transaction: asIncomingView(row),
    ...(input.requestedReceiverCustomerInfoFields
      ? { requestedReceiverCustomerInfoFields: input.requestedReceiverCustomerInfoFields }
      : {}),
    now,
  });
  return asked.decided !== undefined ? (asked.decided as unknown as TransactionView) : presentTransaction(row);
}

/** The platform declined the payment: the pending credit goes back to where it came from. */
async function reject(work: Work, row: store.TransactionRow): Promise<store.TransactionRow> {
  await returnIncoming(work, row);
  const rejected = next(work, row, { status: 'REJECTED' });
  // The reference has no REJECTED event: a declined payment is reported as failed.
  emit(work, rejected, 'FAILED');
  return rejected;
}

function withDetails(row: store.TransactionRow, change: (details: Details) => Details): store.TransactionRow {
  return { ...row, details: JSON.stringify(change(detailsOf(row))) };
}

/** Carries out the platform's decision on a pending incoming payment, in the deciding transaction. */
async function applyIncomingDecision(tx: Tx, input: DecisionInput): Promise<IncomingTransactionView> {
  const row = await store.lockTransaction(tx, input.platformId, input.transactionId);
  if (row === undefined) throw new Error(`incoming transaction ${input.transactionId} does not exist`);
  if (row.type !== 'INCOMING' || row.status !== 'PENDING') return asIncomingView(row);
  const work = openWork(tx, input.platformId, input.now);
  const { outcome } = input;
  let after: store.TransactionRow;
  switch (outcome.kind) {
    case 'APPROVED': {
      const approved = withDetails(row, ({ pendingReason: _reason, ...rest }) => ({
        ...rest,
        ...(outcome.receiverCustomerInfo !== undefined ? { receiverCustomerInfo: outcome.receiverCustomerInfo } : {}),
      }));
      if (detailsOf(row).umaScenario === 'PENDING_LONG') {
        // Approved, but the sender's side takes long: the credit stays pending until then. The
        // payment looks as it did (no event), so its updatedAt stays that of its last event.
        after = approved;
        await railStepJob.schedule(tx, {
          platformId: input.platformId,
          payload: { transactionId: row.id, outcome: { kind: 'COMPLETED' } },
          dueAt: new Date(input.now.getTime() + UMA_PENDING_LONG_MS),
          now: input.now,
        });
      } else {
        after = await complete(work, approved);
      }
      break;
    }
    case 'REJECTED':
      after = await reject(work, row);
      break;
    case 'INFORMATION_REQUIRED':
      // Still pending, credit still held, until the platform is asked again.
      after = next(
        work,
        withDetails(row, (d) => ({ ...d, pendingReason: 'COUNTERPARTY_INFORMATION_REQUIRED' })),
        {},
      );
      break;
    case 'MISSING_RECEIVER_INFO':
      after = await fail(work, row, 'MISSING_MANDATORY_PAYEE_DATA');
      break;
    case 'TIMED_OUT':
      after = await fail(work, row, 'PAYMENT_APPROVAL_TIMED_OUT');
      break;
    case 'WEBHOOK_ERROR':
      after = await fail(work, row, 'PAYMENT_APPROVAL_WEBHOOK_ERROR');
      break;
  }
  await store.saveState(tx, after);
  await finish(work);
  return asIncomingView(after);
}

/** The money side of the approval handshake. */
export const incomingPaymentHooks: IncomingPaymentHooks = {
  applyDecision: applyIncomingDecision,
  async findTransaction(q, platformId, transactionId) {
    const row = await store.findTransaction(q, platformId, transactionId);
    return row === undefined ? undefined : asIncomingView(row);
  },
};

setIncomingPaymentHooks(incomingPaymentHooks);

// ----------------------------------------------------------------------------- quotes

export interface NewQuoteTransaction {
  id: string;
  platformId: string;
  customerId: string | null;
  platformCustomerId: string | null;
  status: 'PENDING' | 'PENDING_AUTHORIZATION';
  /** Where the funds will be held: the source internal account, else the SUSPENSE account of the sending currency. */
  fundsAccountId: string;
  /** What the presentation names as the source account (the internal or external account; the funds account for real-time funding). */
  sourceAccountId: string;
  /** The external account id, or the UMA address. */
  destinationId: string;
  currency: string;
  amount: bigint;
  paymentRail: string | null;
  railSelectionMode: 'AUTO' | 'MANUAL' | null;
  remittanceInformation?: string | undefined;
  purposeOfPayment?: string | undefined;
  conversion: Conversion;
}

/** The SUSPENSE ledger account of a currency: where money from outside waits for its payment. */
export function suspenseAccountId(platformId: string, currency: string): string {
  return systemAccountId(platformId, 'SUSPENSE', currency);
}

/** Writes a new quote's transaction (no money moves yet) and records its first event. */
/** Creates a quote's transaction; returns its row, which this database transaction may change at once (it is new, so no one else holds it). */
export async function openQuoteTransaction(
  tx: Tx,
  input: NewQuoteTransaction,
  now: Date,
): Promise<store.TransactionRow> {
  const work = openWork(tx, input.platformId, now);
  const details: Details = {};
  if (input.remittanceInformation !== undefined) details.remittanceInformation = input.remittanceInformation;
  if (input.purposeOfPayment !== undefined) details.purposeOfPayment = input.purposeOfPayment;
  const row: store.TransactionRow = newRow(
    {
      id: input.id,
      platform_id: input.platformId,
      type: 'OUTGOING',
      status: input.status,
      customer_id: input.customerId,
      platform_customer_id: input.platformCustomerId,
      internal_account_id: input.fundsAccountId,
      external_account_id: input.destinationId,
      source_account_id: input.sourceAccountId,
      destination_account_id: input.destinationId,
      currency: input.currency,
      amount: input.amount.toString(),
      payment_rail: input.paymentRail,
      rail_selection_mode: input.railSelectionMode,
      details: JSON.stringify(details),
      conversion: JSON.stringify(input.conversion),
    },
    now,
  );
  emit(work, row, row.status);
  await store.insertTransaction(tx, row);
  await finish(work);
  return row;
}

/** A quote's transaction, read under its row lock (PostgreSQL) for a change in this database transaction. */
export async function lockQuoteTransaction(tx: Tx, platformId: string, id: string): Promise<store.TransactionRow> {
  const row = await store.lockTransaction(tx, platformId, id);
  if (row === undefined || row.conversion === null) throw new Error(`quote transaction ${id} does not exist`);
  return row;
}

async function changeQuoteTransaction(
  tx: Tx,
  row: store.TransactionRow,
  now: Date,
  change: (work: Work, row: store.TransactionRow) => Promise<store.TransactionRow>,
): Promise<store.TransactionRow> {
  const work = openWork(tx, row.platform_id, now);
  const after = await change(work, row);
  if (after !== row) await store.saveState(tx, after);
  await finish(work);
  return after;
}

/**
 * An SCA step of a quote's payment, PENDING <-> PENDING_AUTHORIZATION: executing an
 * account-funded quote of a customer in an SCA region asks for authorization first, and a
 * satisfied challenge of a real-time-funded one moves it back to PENDING, to wait for its
 * funds (an account-funded one goes on to PROCESSING instead, see executeQuoteTransaction).
 * A row in another state is left as it is.
 */
export async function moveQuoteAuthorization(
  tx: Tx,
  row: store.TransactionRow,
  now: Date,
  to: 'PENDING' | 'PENDING_AUTHORIZATION',
): Promise<store.TransactionRow> {
  const from = to === 'PENDING' ? 'PENDING_AUTHORIZATION' : 'PENDING';
  return changeQuoteTransaction(tx, row, now, async (work, current) => {
    if (current.status !== from) return current;
    const moved = next(work, current, { status: to });
    emit(work, moved, to);
    return moved;
  });
}

/**
 * The quote's time ran out before it was executed or funded: PENDING -> EXPIRED
 * (QUOTE_EXPIRED); a payment still awaiting authorization fails instead, PENDING_AUTHORIZATION
 * -> FAILED (SCA_NOT_COMPLETED), the reference's transition for a challenge never answered.
 * No money has moved in either state, so none moves back.
 */
export async function expireQuoteTransaction(
  tx: Tx,
  row: store.TransactionRow,
  now: Date,
): Promise<store.TransactionRow> {
  return changeQuoteTransaction(tx, row, now, async (work, current) => {
    if (current.status === 'PENDING_AUTHORIZATION') {
      const failed = next(work, current, { status: 'FAILED', failure_reason: 'SCA_NOT_COMPLETED' });
      emit(work, failed, 'FAILED');
      return failed;
    }
    if (current.status !== 'PENDING') return current;
    const expired = next(work, current, { status: 'EXPIRED', failure_reason: 'QUOTE_EXPIRED' });
    emit(work, expired, 'EXPIRED');
    return expired;
  });
}

/**
 * Starts a quote's payment: the funds are held on the source internal account (throws
 * InsufficientFunds when they fall short) or received from outside into SUSPENSE
 * (`paidAmount`, the amount that arrived; pulls and real-time funding), the transaction goes
 * PROCESSING and the payout's timeline starts. Money that arrives in the wrong amount is
 * refunded and fails the payment (FUNDING_AMOUNT_MISMATCH). The transaction is PENDING, or
 * PENDING_AUTHORIZATION when `authorized` (an execute that waited for its challenge, which
 * has just been satisfied, goes straight on to PROCESSING).
 */
export async function executeQuoteTransaction(
  tx: Tx,
  row: store.TransactionRow,
  now: Date,
  timeline: TimelineStep[],
  options: { paidAmount?: bigint | undefined; authorized?: boolean } = {},
): Promise<store.TransactionRow> {
  const { paidAmount } = options;
  const from = options.authorized === true ? 'PENDING_AUTHORIZATION' : 'PENDING';
  return changeQuoteTransaction(tx, row, now, async (work, current) => {
    if (current.status !== from) throw new Error(`quote transaction ${current.id} is ${current.status}, not ${from}`);
    const conversion = conversionOf(current)!;
    if (conversion.funding === 'INTERNAL_ACCOUNT') {
      await work.books.hold(current.internal_account_id, current.currency, amountOf(current), current.id);
    } else {
      const paid = paidAmount ?? amountOf(current);
      await work.books.receiveFunding(current.currency, paid, current.id);
      if (paid !== amountOf(current)) {
        await work.books.refundExternally(current.currency, paid, current.id);
        const failed = next(work, current, { status: 'FAILED', failure_reason: 'FUNDING_AMOUNT_MISMATCH' });
        emit(work, failed, 'FAILED');
        return refund(work, failed, 'TRANSACTION_FAILED');
      }
    }
    const processing = next(work, current, { status: 'PROCESSING' });
    emit(work, processing, 'PROCESSING');
    return playTimeline(tx, work, processing, timeline);
  });
}
