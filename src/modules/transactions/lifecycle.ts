// The transaction lifecycle: every transition of a transaction changes its status and
// timestamp, posts to the ledger through its named movements and records its events, in one
// database transaction (see service.ts for the state machine). Transfers, incoming payments,
// quotes' payments and card transactions all move through here.

import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { recordEvents, type EventInput } from '../../events/outbox.js';
import { newId } from '../../ids.js';
import { defineJob } from '../../jobs/queue.js';
import { openBooks, type Books, type ConversionLegs, type Funds } from '../../ledger/index.js';
import type { RailOutcome, TimelineStep } from '../../rails/types.js';
import { findTransferCounterparty } from '../external-accounts/service.js';
import { recordBalanceUpdates, type InternalAccountView } from '../internal-accounts/service.js';
import {
  type Conversion,
  conversionOf,
  type Details,
  presentTransaction,
  type RefundView,
  type TransactionView,
} from './presentation.js';
import * as store from './store.js';

// ----------------------------------------------------------------------------- transitions

/**
 * The work of one change to a transaction: its ledger postings and its events, kept in
 * memory while the transitions run and written by finish() (the row by the caller), so a
 * transfer that passes through several states still costs a handful of statements.
 */
export interface Work {
  tx: Queryable;
  platformId: string;
  books: Books;
  events: EventInput[];
  now: Date;
  /** Internal accounts read earlier in this transaction (their balance events need not read them again). */
  accounts?: InternalAccountView[];
  /** The row of the last event and the view it carries; see viewOf. */
  last?: { row: store.TransactionRow; view: TransactionView };
  /**
   * The conversion of the rows this work changes, parsed once: their `conversion` text is the
   * same from one transition to the next (see conversionIn).
   */
  conversion?: { text: string; value: Conversion };
}

/**
 * A row's conversion, parsed once per work: a payment's transitions copy the row, not its
 * conversion's text, so each event's view and each ledger movement need not parse it again.
 */
export function conversionIn(work: Work, row: store.TransactionRow): Conversion | undefined {
  const text = row.conversion;
  if (text === null) return undefined;
  if (work.conversion?.text !== text) work.conversion = { text, value: conversionOf(row)! };
  return work.conversion.value;
}

export function openWork(tx: Queryable, platformId: string, now: Date): Work {
  return { tx, platformId, books: openBooks(tx, platformId, now), events: [], now };
}

/** The transaction as a response shows it: the last event's view when that event is of this very row. */
export function viewOf(work: Work, row: store.TransactionRow): TransactionView {
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
export async function finish(work: Work): Promise<void> {
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

export function emit(work: Work, row: store.TransactionRow, event: string): void {
  const prefix = row.type === 'OUTGOING' ? 'OUTGOING_PAYMENT' : 'INCOMING_PAYMENT';
  const view = presentTransaction(row, conversionIn(work, row));
  work.last = { row, view };
  work.events.push({
    platformId: row.platform_id,
    type: `${prefix}.${event}`,
    resourceId: row.id,
    data: view,
    now: work.now,
  });
}

export function amountOf(row: store.TransactionRow): bigint {
  return BigInt(row.amount);
}

export function next(
  work: Work,
  row: store.TransactionRow,
  changes: Partial<store.TransactionState>,
): store.TransactionRow {
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
  const conversion = conversionIn(work, row);
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
export async function returnIncoming(work: Work, row: store.TransactionRow): Promise<void> {
  if (depositsExternally(row)) await work.books.refundExternally(row.currency, amountOf(row), row.id);
  else await work.books.failIncoming(row.internal_account_id, row.currency, amountOf(row), row.id);
}

/** The rail completed the payment: outgoing funds leave the held bucket, incoming ones become available (or are passed on). */
export async function complete(work: Work, row: store.TransactionRow): Promise<store.TransactionRow> {
  const conversion = conversionIn(work, row);
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
export async function fail(
  work: Work,
  row: store.TransactionRow,
  failureReason: string,
): Promise<store.TransactionRow> {
  if (row.type === 'OUTGOING') {
    // Money received from outside for a conversion can only go back by a refund.
    const conversion = conversionIn(work, row);
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
  const conversion = conversionIn(work, row);
  if (conversion !== undefined) await work.books.strand(fundsOf(row, conversion), row.currency, amountOf(row), row.id);
  else await work.books.release(row.internal_account_id, row.currency, amountOf(row), row.id);
  return refund(work, failed, 'TRANSACTION_FAILED', 'FAILED');
}

function refundReference(row: store.TransactionRow): string {
  return `${row.reference}-R`;
}

/** Records a refund that the sandbox settles (or fails) at once: REFUND_PENDING, then REFUND_COMPLETED or REFUND_FAILED. */
export function refund(
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
  const conversion = conversionIn(work, row);
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
export async function cancel(
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
export async function playTimeline(
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
export type NewRowFields = Omit<
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

export function newRow(fields: NewRowFields, now: Date): store.TransactionRow {
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
  if (input.internalAccount !== undefined) {
    const account = input.internalAccount;
    work.accounts = [account];
    work.books.know(account.id, { available: BigInt(account.available), held: BigInt(account.held) });
  }
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
