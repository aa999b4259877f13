// The inspection endpoints: read-only views a person needs to follow the sandbox (the
// dashboard uses them) that the Grid API has no operation for. Every read is scoped by the
// authenticated platform: another platform's id answers 404.

import type { PageRequest } from '../../db/pagination.js';
import { toPage } from '../../db/pagination.js';
import { deliveryRequest } from '../../events/delivery.js';
import type { Ctx } from '../../http/context.js';
import { apiError } from '../../http/errors.js';
import { postingsOfAccount, postingsOfTransaction, type EntryRow, type PostingRow } from '../../ledger/history.js';
import { parseShared } from '../../json.js';
import { findInternalAccount } from '../internal-accounts/service.js';
import { presentTransactionById } from '../transactions/service.js';
import * as store from './store.js';

function presentEvent(row: store.EventRow) {
  return {
    id: row.id,
    type: row.type,
    resourceId: row.resource_id,
    timestamp: row.created_at,
    data: parseShared<unknown>(row.data),
  };
}

function presentPosting(row: PostingRow, entries: EntryRow[]) {
  return {
    id: row.id,
    kind: row.kind,
    currency: row.currency,
    ...(row.transaction_id !== null ? { transactionId: row.transaction_id } : {}),
    createdAt: row.created_at,
    entries: entries
      .filter((e) => e.posting_id === row.id)
      .map((e) => ({
        accountId: e.account_id,
        accountKind: e.account_kind ?? 'UNKNOWN',
        bucket: e.bucket,
        currency: e.currency,
        amount: Number(e.amount),
      })),
  };
}

export async function listEvents(ctx: Ctx, filters: store.EventFilters, page: PageRequest) {
  return toPage(await store.listEvents(ctx.db.k, ctx.platformId, filters, page), presentEvent);
}

/** A transaction's events and money movements, oldest first. */
export async function getTransactionTimeline(ctx: Ctx, transactionId: string) {
  const transaction = await presentTransactionById(ctx.db.k, ctx.platformId, transactionId);
  if (transaction === undefined) throw apiError('TRANSACTION_NOT_FOUND', `No transaction ${transactionId}`);
  const events = await store.eventsOfResource(ctx.db.k, ctx.platformId, transactionId);
  const { postings, entries } = await postingsOfTransaction(ctx.db.k, ctx.platformId, transactionId);
  return {
    transactionId,
    events: events.map(presentEvent),
    movements: postings.map((p) => presentPosting(p, entries)),
  };
}

/** The postings behind an internal account's balances, newest first, each as the change it made to the two buckets. */
export async function getAccountEntries(ctx: Ctx, accountId: string, page: PageRequest) {
  const account = await findInternalAccount(ctx.db.k, ctx.platformId, accountId);
  if (account === undefined) throw apiError('REFERENCE_NOT_FOUND', `No internal account ${accountId}`);
  const { page: result, entries } = await postingsOfAccount(ctx.db.k, ctx.platformId, accountId, page);
  const change = (postingId: string, bucket: string) =>
    entries
      .filter((e) => e.posting_id === postingId && e.bucket === bucket)
      .reduce((sum, e) => sum + BigInt(e.amount), 0n);
  return {
    accountId,
    currency: account.currency,
    available: Number(account.available),
    held: Number(account.held),
    ...toPage(result, (row) => ({
      postingId: row.id,
      kind: row.kind,
      ...(row.transaction_id !== null ? { transactionId: row.transaction_id } : {}),
      createdAt: row.created_at,
      availableChange: Number(change(row.id, 'AVAILABLE')),
      heldChange: Number(change(row.id, 'HELD')),
    })),
  };
}

export function getDeliveryRequest(ctx: Ctx, deliveryId: string) {
  return deliveryRequest(ctx, deliveryId);
}
