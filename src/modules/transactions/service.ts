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
//
// The lifecycle itself is lifecycle.ts; how a transaction is shown, presentation.ts; incoming
// UMA payments, incoming.ts; quotes' payments, quote-payments.ts. This file holds the
// operations of the API.

import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import type { Ctx } from '../../http/context.js';
import { apiError } from '../../http/errors.js';
import { findCustomerRow } from '../customers/lookup.js';
import { cancel, finish, openWork, viewOf } from './lifecycle.js';
import { presentAnyTransaction, presentTransaction } from './presentation.js';
import * as store from './store.js';

export type { TransactionRow } from './store.js';
export { onPaymentFailure, railStepJob, startTransfer, type NewTransfer, type PaymentFailure } from './lifecycle.js';
export { presentTransaction, type Conversion, type RefundView, type TransactionView } from './presentation.js';
export { incomingPaymentHooks, receiveUmaPayment, type NewIncomingUmaPayment } from './incoming.js';
export * from './quote-payments.js';

// ----------------------------------------------------------------------------- customers

/** The platform's id for a customer, recorded on its transactions; null for the platform's own. */
export async function platformCustomerIdOf(
  q: Queryable,
  platformId: string,
  customerId: string | null,
): Promise<string | null> {
  if (customerId === null) return null;
  return (await findCustomerRow(q, platformId, customerId))?.platform_customer_id ?? null;
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
  return presentAnyTransaction(await load(ctx.db.k, ctx, id));
}

/** A transaction of one customer (an agent's view): another customer's does not exist here. */
export async function getCustomerTransaction(ctx: Ctx, id: string, customerId: string) {
  const row = await load(ctx.db.k, ctx, id);
  if (row.customer_id !== customerId) throw notFound(id);
  return presentAnyTransaction(row);
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
        return toPage({ rows: [], hasMore: false, totalCount: 0 }, presentAnyTransaction);
      filters.customerId = null;
    } else {
      filters.platformCustomerId = platformCustomerId;
    }
  }
  const page = await store.listTransactions(ctx.db.k, ctx.platformId, filters, { limit, cursor, sortOrder });
  return toPage(page, presentAnyTransaction);
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
    return presentAnyTransaction(confirmed);
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
