import { sql, type Kysely } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import { paginate, paginatePrepared, storedTime, type PageRequest } from '../../db/pagination.js';
import { prepare, preparedInsert } from '../../db/prepared.js';
import type { TransactionsTable } from '../../db/schema.js';

/** A transaction as read: the amount as text (a 64-bit column; see ledger/store.ts). */
export type TransactionRow = Omit<TransactionsTable, 'amount'> & { amount: string };

const COLUMNS = [
  'id',
  'platform_id',
  'type',
  'status',
  'customer_id',
  'platform_customer_id',
  'internal_account_id',
  'external_account_id',
  'source_account_id',
  'destination_account_id',
  'currency',
  'amount',
  'payment_rail',
  'rail_selection_mode',
  'failure_reason',
  'refund',
  'reference',
  'details',
  'settled_at',
  'receipt_delivery_confirmed_at',
  'created_at',
  'updated_at',
  'conversion',
] as const;

// A new row with a fresh id: on PostgreSQL it travels with the transaction's next statement
// (db/deferred.ts).
const insertRow = preparedInsert('transactions', COLUMNS, 1, { deferred: true });

export async function insertTransaction(q: Queryable, row: TransactionRow): Promise<void> {
  await insertRow.one(q, row);
}

const selectRow = (k: Queryable) =>
  k
    .selectFrom('transactions')
    .select(COLUMNS.filter((c) => c !== 'amount'))
    .select(sql<string>`CAST(transactions.amount AS TEXT)`.as('amount'));

const byId = prepare<{ platformId: string; id: string }, TransactionRow>((k, param) =>
  selectRow(k).where('platform_id', '=', param('platformId')).where('id', '=', param('id')),
);

export async function findTransaction(
  q: Queryable,
  platformId: string,
  id: string,
): Promise<TransactionRow | undefined> {
  return byId.first(q, { platformId, id });
}

const byIdLocked = prepare<{ platformId: string; id: string }, TransactionRow>((k, param) =>
  selectRow(k).where('platform_id', '=', param('platformId')).where('id', '=', param('id')).forUpdate(),
);

/**
 * Reads a transaction and, on PostgreSQL, locks its row until the transaction ends, so two
 * concurrent changes of one transaction happen one after the other (SQLite transactions are
 * exclusive already).
 */
export async function lockTransaction(
  q: Queryable,
  platformId: string,
  id: string,
): Promise<TransactionRow | undefined> {
  return (onPostgres(q) ? byIdLocked : byId).first(q, { platformId, id });
}

/** The columns a transition changes. */
export type TransactionState = Pick<
  TransactionRow,
  | 'status'
  | 'amount'
  | 'failure_reason'
  | 'refund'
  | 'details'
  | 'settled_at'
  | 'receipt_delivery_confirmed_at'
  | 'updated_at'
>;

const saveStateRow = prepare<TransactionState & { id: string }>((k, param) =>
  k
    .updateTable('transactions')
    .set({
      status: param('status'),
      // A card authorization's total changes with an advice; other transactions write it unchanged.
      amount: param('amount'),
      failure_reason: param('failure_reason'),
      refund: param('refund'),
      details: param('details'),
      settled_at: param('settled_at'),
      receipt_delivery_confirmed_at: param('receipt_delivery_confirmed_at'),
      updated_at: param('updated_at'),
    })
    .where('id', '=', param('id')),
);

export async function saveState(q: Queryable, row: TransactionRow): Promise<void> {
  await saveStateRow.run(q, row);
}

export interface TransactionFilters {
  /** undefined: every owner; null: the platform's own; else a customer id. */
  customerId?: string | null | undefined;
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

// The platform's transactions as the database counts them (see migration 0008): a handful of
// rows to sum instead of every transaction.
const countOfPlatform = prepare<{ platformId: string }, { n: string | null }>((k, param) =>
  (k as unknown as Kysely<{ transaction_counts: { platform_id: string; n: number } }>)
    .selectFrom('transaction_counts')
    .select(sql<string | null>`CAST(SUM(n) AS TEXT)`.as('n'))
    .where('platform_id', '=', param('platformId')),
);

export async function countTransactions(q: Queryable, platformId: string): Promise<number> {
  return Number((await countOfPlatform.first(q, { platformId }))?.n ?? 0);
}

// The unfiltered list (every page of GET /transactions without filters), prepared: newest or
// oldest first, from the start or after a cursor, in the order of paginate().
const pageOf = {
  desc: prepare<{ platformId: string; limit: number }, TransactionRow>((k, param) =>
    selectRow(k)
      .where('platform_id', '=', param('platformId'))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(param('limit')),
  ),
  asc: prepare<{ platformId: string; limit: number }, TransactionRow>((k, param) =>
    selectRow(k)
      .where('platform_id', '=', param('platformId'))
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(param('limit')),
  ),
};
const pageAfter = {
  desc: prepare<{ platformId: string; limit: number; createdAt: string; id: string }, TransactionRow>((k, param) =>
    selectRow(k)
      .where('platform_id', '=', param('platformId'))
      .where((eb) =>
        eb.or([
          eb('created_at', '<', param('createdAt')),
          eb.and([eb('created_at', '=', param('createdAt')), eb('id', '<', param('id'))]),
        ]),
      )
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(param('limit')),
  ),
  asc: prepare<{ platformId: string; limit: number; createdAt: string; id: string }, TransactionRow>((k, param) =>
    selectRow(k)
      .where('platform_id', '=', param('platformId'))
      .where((eb) =>
        eb.or([
          eb('created_at', '>', param('createdAt')),
          eb.and([eb('created_at', '=', param('createdAt')), eb('id', '>', param('id'))]),
        ]),
      )
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(param('limit')),
  ),
};

export async function listTransactions(
  q: Queryable,
  platformId: string,
  filters: TransactionFilters,
  page: PageRequest,
) {
  const unfiltered = Object.values(filters).every((value) => value === undefined);
  if (unfiltered) {
    return paginatePrepared<TransactionRow>(
      page,
      (limit, order, after) =>
        after === undefined
          ? pageOf[order].all(q, { platformId, limit })
          : pageAfter[order].all(q, { platformId, limit, createdAt: after.createdAt, id: after.id }),
      () => countTransactions(q, platformId),
    );
  }
  let query = selectRow(q).where('platform_id', '=', platformId);
  if (filters.customerId === null) query = query.where('customer_id', 'is', null);
  else if (filters.customerId !== undefined) query = query.where('customer_id', '=', filters.customerId);
  if (filters.platformCustomerId !== undefined)
    query = query.where('platform_customer_id', '=', filters.platformCustomerId);
  if (filters.accountIdentifier !== undefined) {
    const id = filters.accountIdentifier;
    query = query.where((eb) => eb.or([eb('source_account_id', '=', id), eb('destination_account_id', '=', id)]));
  }
  if (filters.senderAccountIdentifier !== undefined)
    query = query.where('source_account_id', '=', filters.senderAccountIdentifier);
  if (filters.receiverAccountIdentifier !== undefined)
    query = query.where('destination_account_id', '=', filters.receiverAccountIdentifier);
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.type !== undefined) query = query.where('type', '=', filters.type);
  if (filters.reference !== undefined) query = query.where('reference', '=', filters.reference);
  if (filters.startDate !== undefined) query = query.where('created_at', '>=', storedTime(filters.startDate, 'from'));
  if (filters.endDate !== undefined) query = query.where('created_at', '<=', storedTime(filters.endDate, 'to'));
  return paginate(query, 'transactions', page);
}
