// The inspection endpoints: read-only views a person needs to follow the sandbox (the
// dashboard uses them) that the Grid API has no operation for. Every read is scoped by the
// authenticated platform: another platform's id answers 404.

import { type PageRequest, type PageResult, pageLimit, toPage } from '../../db/pagination.js';
import { deliveryRequest, deliveryStates } from '../../events/delivery.js';
import type { EventWaitRoom } from '../../events/waiters.js';
import type { Ctx } from '../../http/context.js';
import { apiError, FieldErrors } from '../../http/errors.js';
import { postingsOfAccount, postingsOfTransaction, type EntryRow, type PostingRow } from '../../ledger/history.js';
import { parseShared } from '../../json.js';
import { findInternalAccount } from '../internal-accounts/service.js';
import { presentTransactionById } from '../transactions/service.js';
import { eventTypesOf } from './schemas.js';
import * as store from './store.js';

type DeliveryState = ReturnType<Awaited<ReturnType<typeof deliveryStates>>['get']>;

function presentEvent(row: store.EventRow, delivery?: DeliveryState) {
  return {
    id: row.id,
    type: row.type,
    resourceId: row.resource_id,
    timestamp: row.created_at,
    data: parseShared<unknown>(row.data),
    ...(delivery !== undefined ? { delivery } : {}),
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

export interface EventQuery extends PageRequest {
  /** One type or several, separated by commas. */
  type?: string | undefined;
  resourceId?: string | undefined;
  createdAfter?: string | undefined;
  after?: string | undefined;
  /** Seconds. */
  wait?: number | undefined;
}

/**
 * While a followed event is not final yet (PostgreSQL: a transaction that began earlier is
 * still running, see store.eventsAfter), the wait reads again after this pause, doubled
 * each time up to EVENT_HELD_RETRY_MS_MAX: that transaction's end sends no notification when
 * it records no event.
 */
const EVENT_HELD_RETRY_MS = 25;
const EVENT_HELD_RETRY_MS_MAX = 1_000;

/**
 * The platform's events: newest first, or, with `after`, those recorded after that event,
 * oldest first (a test follows the log with the last id it saw). With `wait`, a request that
 * matches nothing yet is held until an event that matches is recorded, or answered empty at
 * the deadline (see events/waiters.ts); `gone` ends the wait when the client leaves.
 */
export async function listEvents(ctx: Ctx, room: EventWaitRoom, query: EventQuery, gone?: AbortSignal) {
  const { type, resourceId, createdAfter, after, wait, ...page } = query;
  const problems = new FieldErrors();
  const types = type === undefined ? undefined : eventTypesOf(type);
  if (after !== undefined && page.cursor !== undefined)
    problems.add('cursor', 'cannot be given with after: follow the log with after set to the last id you saw');
  const position = after === undefined ? undefined : await store.logPosition(ctx.db.k, ctx.platformId, after);
  if (after !== undefined && position === undefined)
    problems.add('after', `is not the id of an event of this platform`);
  problems.throwIfAny();
  const filters = { types, resourceId, createdAfter };
  let heldRetryMs = EVENT_HELD_RETRY_MS;
  const read = async () => {
    if (position === undefined) {
      const result = await store.listEvents(ctx.db.k, ctx.platformId, filters, page);
      return { result: await presentPage(ctx, result), done: result.rows.length > 0 };
    }
    const result = await store.eventsAfter(ctx.db.k, ctx.platformId, filters, position, pageLimit(page));
    const retryMs = result.held ? heldRetryMs : undefined;
    if (result.held) heldRetryMs = Math.min(heldRetryMs * 2, EVENT_HELD_RETRY_MS_MAX);
    const presented = await presentPage(ctx, {
      rows: result.rows,
      hasMore: result.hasMore,
      totalCount: result.totalCount,
    });
    return { result: presented, done: result.rows.length > 0, retryMs };
  };
  if (wait === undefined || wait === 0) return (await read()).result;
  return room.waitFor(ctx.platformId, wait * 1000, read, gone);
}

/** A page of events, each with its webhook's delivery when it has one. */
async function presentPage(ctx: Ctx, result: PageResult<store.EventRow>) {
  const deliveries = await deliveryStates(
    ctx.db.k,
    ctx.platformId,
    result.rows.map((row) => row.id),
  );
  return toPage(result, (row) => presentEvent(row, deliveries.get(row.id)));
}

/** A transaction's events and money movements, oldest first. */
export async function getTransactionTimeline(ctx: Ctx, transactionId: string) {
  const transaction = await presentTransactionById(ctx.db.k, ctx.platformId, transactionId);
  if (transaction === undefined) throw apiError('TRANSACTION_NOT_FOUND', `No transaction ${transactionId}`);
  const events = await store.eventsOfResource(ctx.db.k, ctx.platformId, transactionId);
  const { postings, entries } = await postingsOfTransaction(ctx.db.k, ctx.platformId, transactionId);
  return {
    transactionId,
    events: events.map((row) => presentEvent(row)),
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
