// A cross-currency quote's payment: its transaction exists from the quote's creation, and its
// status is the quote's (see service.ts for the state machine).

import type { Tx } from '../../db/index.js';
import { systemAccountId } from '../../ledger/index.js';
import type { TimelineStep } from '../../rails/types.js';
import type { InternalAccountView } from '../internal-accounts/service.js';
import {
  amountOf,
  conversionIn,
  emit,
  finish,
  newRow,
  next,
  openWork,
  playTimeline,
  refund,
  type Work,
} from './lifecycle.js';
import type { Conversion, Details } from './presentation.js';
import * as store from './store.js';

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

// A quote's transaction opened to be changed at once (a quote executed at its creation): its
// row and its first event wait for that change, so the row is written once, in its state
// after it, and the events of both steps in one go. Keyed by the row object the opener
// returned, which the change is handed.
const unwritten = new WeakMap<store.TransactionRow, Work>();

/**
 * Creates a quote's transaction; returns its row, which this database transaction may change
 * at once (it is new, so no one else holds it). With `writeWithChange`, nothing is written
 * yet: the first change of this row in this database transaction writes it, and
 * `writeOpenedQuoteTransaction` writes it when no change came.
 */
export async function openQuoteTransaction(
  tx: Tx,
  input: NewQuoteTransaction,
  now: Date,
  writeWithChange = false,
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
  // The row's conversion is the caller's, which need not be parsed back from its text.
  work.conversion = { text: row.conversion!, value: input.conversion };
  emit(work, row, row.status);
  unwritten.set(row, work);
  if (!writeWithChange) await writeOpenedQuoteTransaction(tx, row);
  return row;
}

/** Writes a transaction opened with `writeWithChange` that no change has written; else does nothing. */
export async function writeOpenedQuoteTransaction(tx: Tx, row: store.TransactionRow): Promise<void> {
  const work = unwritten.get(row);
  if (work === undefined) return;
  unwritten.delete(row);
  await store.insertTransaction(tx, row);
  await finish(work);
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
  prepare?: (work: Work) => void,
): Promise<store.TransactionRow> {
  // A row not written yet carries the work of its opening (its first event) into this change.
  const opened = unwritten.get(row);
  if (opened !== undefined) unwritten.delete(row);
  const work = opened ?? openWork(tx, row.platform_id, now);
  prepare?.(work);
  const after = await change(work, row);
  if (opened !== undefined) await store.insertTransaction(tx, after);
  else if (after !== row) await store.saveState(tx, after);
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
  options: ExecuteQuoteOptions = {},
): Promise<store.TransactionRow> {
  const { paidAmount, conversion: parsed, fundsAccount } = options;
  const from = options.authorized === true ? 'PENDING_AUTHORIZATION' : 'PENDING';
  const prepare = (work: Work) => {
    if (parsed !== undefined && row.conversion !== null) work.conversion = { text: row.conversion, value: parsed };
    // The funds account as the caller read it in this transaction: its balances need not be
    // read again before the hold, nor the account after it for its balance event (the
    // guarded update returns the balances it wrote).
    if (fundsAccount !== undefined && fundsAccount.id === row.internal_account_id) {
      work.accounts = [fundsAccount];
      work.books.know(fundsAccount.id, {
        available: BigInt(fundsAccount.available),
        held: BigInt(fundsAccount.held),
      });
    }
  };
  return changeQuoteTransaction(
    tx,
    row,
    now,
    async (work, current) => {
      if (current.status !== from) throw new Error(`quote transaction ${current.id} is ${current.status}, not ${from}`);
      const conversion = conversionIn(work, current)!;
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
    },
    prepare,
  );
}

export interface ExecuteQuoteOptions {
  /** Real-time funding or a pull: the amount that arrived. */
  paidAmount?: bigint | undefined;
  /** The payment waited in PENDING_AUTHORIZATION for a challenge now satisfied. */
  authorized?: boolean;
  /** The row's conversion, when the caller parsed it already. */
  conversion?: Conversion;
  /** The source internal account (with its balances) as read earlier in this database transaction. */
  fundsAccount?: InternalAccountView | undefined;
}
