import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import { paginate, paginatePrepared, paginateUnion, storedTime, type PageRequest } from '../../db/pagination.js';
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
// The cursor as one row-value comparison, which both databases turn into a range of the
// index (an OR of two comparisons would scan the index from its start on SQLite).
const pageAfter = {
  desc: prepare<{ platformId: string; limit: number; createdAt: string; id: string }, TransactionRow>((k, param) =>
    selectRow(k)
      .where('platform_id', '=', param('platformId'))
      .where(sql<boolean>`(created_at, id) < (${param('createdAt')}, ${param('id')})`)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(param('limit')),
  ),
  asc: prepare<{ platformId: string; limit: number; createdAt: string; id: string }, TransactionRow>((k, param) =>
    selectRow(k)
      .where('platform_id', '=', param('platformId'))
      .where(sql<boolean>`(created_at, id) > (${param('createdAt')}, ${param('id')})`)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(param('limit')),
  ),
};

// ----------------------------------------------------------------------------- counts

// The counts that migration 0016's triggers keep (see there): per platform, filter and value;
// those of every row, status and type also per day of createdAt.
type CountsDb = Kysely<{
  list_counts: { platform_id: string; list: string; dim: string; value: string; day: string; n: number };
  transactions: TransactionsTable;
}>;

const sumOf = prepare<{ platformId: string; dim: string; value: string }, { n: string | null }>((k, param) =>
  (k as unknown as CountsDb)
    .selectFrom('list_counts')
    .select(sql<string | null>`CAST(SUM(n) AS TEXT)`.as('n'))
    .where('platform_id', '=', param('platformId'))
    .where('list', '=', 'transactions')
    .where('dim', '=', param('dim'))
    .where('value', '=', param('value')),
);

/** The days strictly between `after` and `before` (a dimension kept per day). */
const sumOfDays = prepare<
  { platformId: string; dim: string; value: string; after: string; before: string },
  { n: string | null }
>((k, param) =>
  (k as unknown as CountsDb)
    .selectFrom('list_counts')
    .select(sql<string | null>`CAST(SUM(n) AS TEXT)`.as('n'))
    .where('platform_id', '=', param('platformId'))
    .where('list', '=', 'transactions')
    .where('dim', '=', param('dim'))
    .where('value', '=', param('value'))
    .where('day', '>', param('after'))
    .where('day', '<', param('before')),
);

/** A dimension kept per day: every row (no column), or the rows of one status or type. */
type DailyDim = { dim: 'all' } | { dim: 'status' | 'type'; value: string };

/** The rows of one dimension created in [from, to] (stored times), counted through its index. */
async function countRange(q: Queryable, platformId: string, d: DailyDim, from: string, to: string, toOpen: boolean) {
  let query = (q as unknown as CountsDb)
    .selectFrom('transactions')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('platform_id', '=', platformId)
    .where('created_at', '>=', from)
    .where('created_at', toOpen ? '<' : '<=', to);
  if (d.dim !== 'all') query = query.where(d.dim, '=', d.value);
  return Number((await query.executeTakeFirst())?.n ?? 0);
}

/**
 * The rows of a daily dimension created in [from, to]: the whole days inside from the
 * counts, the rows of the first and last day through the index (at most two days of rows).
 */
async function countDaily(
  q: Queryable,
  platformId: string,
  d: DailyDim,
  from: string | undefined,
  to: string | undefined,
): Promise<number> {
  const value = d.dim === 'all' ? '' : d.value;
  if (from === undefined && to === undefined) {
    return Number((await sumOf.first(q, { platformId, dim: d.dim, value }))?.n ?? 0);
  }
  if (from !== undefined && to !== undefined && from > to) return 0;
  const fromDay = from?.slice(0, 10);
  const toDay = to?.slice(0, 10);
  if (from !== undefined && to !== undefined && fromDay === toDay) return countRange(q, platformId, d, from, to, false);
  // Every stored time of a day sorts before the day followed by 'U' (its 'T' comes first).
  const [inside, first, last] = await Promise.all([
    sumOfDays.first(q, { platformId, dim: d.dim, value, after: fromDay ?? '', before: toDay ?? '~' }),
    from === undefined ? 0 : countRange(q, platformId, d, from, `${fromDay}U`, true),
    to === undefined ? 0 : countRange(q, platformId, d, toDay!, to, false),
  ]);
  return Number(inside?.n ?? 0) + first + last;
}

/** The rows of a dimension kept whole (customer, account). */
async function countWhole(q: Queryable, platformId: string, dim: string, value: string): Promise<number> {
  return Number((await sumOf.first(q, { platformId, dim, value }))?.n ?? 0);
}

/**
 * The count of a filtered list from the kept counts, when its filters allow (one filter,
 * with dates only on a daily dimension); undefined when the list must count its rows.
 */
async function keptCount(q: Queryable, platformId: string, filters: TransactionFilters): Promise<number | undefined> {
  const { startDate, endDate, ...rest } = filters;
  const from = startDate === undefined ? undefined : storedTime(startDate, 'from');
  const to = endDate === undefined ? undefined : storedTime(endDate, 'to');
  const set = Object.entries(rest).filter(([, value]) => value !== undefined);
  if (set.length === 0) {
    return from === undefined && to === undefined
      ? countTransactions(q, platformId)
      : countDaily(q, platformId, { dim: 'all' }, from, to);
  }
  if (set.length > 1) return undefined;
  const [name, value] = set[0] as [keyof typeof rest, string | null];
  if (name === 'status' || name === 'type') return countDaily(q, platformId, { dim: name, value: value! }, from, to);
  // '' is no id: the counts keep the rows without one under ''.
  if (from !== undefined || to !== undefined || value === '') return undefined;
  switch (name) {
    case 'customerId':
      return countWhole(q, platformId, 'customer', value ?? '');
    case 'platformCustomerId':
      return countWhole(q, platformId, 'platform_customer', value!);
    case 'senderAccountIdentifier':
      return countWhole(q, platformId, 'source', value!);
    case 'receiverAccountIdentifier':
      return countWhole(q, platformId, 'destination', value!);
    case 'accountIdentifier': {
      const [source, destination, same] = await Promise.all(
        ['source', 'destination', 'same'].map((dim) => countWhole(q, platformId, dim, value!)),
      );
      return source! + destination! - same!;
    }
    default:
      return undefined;
  }
}

// ----------------------------------------------------------------------------- the list

// biome-ignore lint/suspicious/noExplicitAny: Kysely's builder types do not survive a helper
function withFilters(query: SelectQueryBuilder<any, 'transactions', any>, filters: TransactionFilters) {
  let q = query;
  if (filters.customerId === null) q = q.where('customer_id', 'is', null);
  else if (filters.customerId !== undefined) q = q.where('customer_id', '=', filters.customerId);
  if (filters.platformCustomerId !== undefined) q = q.where('platform_customer_id', '=', filters.platformCustomerId);
  if (filters.senderAccountIdentifier !== undefined)
    q = q.where('source_account_id', '=', filters.senderAccountIdentifier);
  if (filters.receiverAccountIdentifier !== undefined)
    q = q.where('destination_account_id', '=', filters.receiverAccountIdentifier);
  if (filters.status !== undefined) q = q.where('status', '=', filters.status);
  if (filters.type !== undefined) q = q.where('type', '=', filters.type);
  if (filters.reference !== undefined) q = q.where('reference', '=', filters.reference);
  if (filters.startDate !== undefined) q = q.where('created_at', '>=', storedTime(filters.startDate, 'from'));
  if (filters.endDate !== undefined) q = q.where('created_at', '<=', storedTime(filters.endDate, 'to'));
  return q;
}

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
  const count = async (query: { count(): Promise<number> }) =>
    (await keptCount(q, platformId, filters)) ?? query.count();
  const base = withFilters(selectRow(q).where('platform_id', '=', platformId), filters);
  const account = filters.accountIdentifier;
  if (account === undefined) {
    return paginate(base, 'transactions', page, (all) => count({ count: all }));
  }
  // Either side: the page merges the first rows of each side's index (a row on both sides
  // appears once); the count matches either.
  return paginateUnion(
    q,
    [base.where('source_account_id', '=', account), base.where('destination_account_id', '=', account)],
    page,
    () =>
      count({
        count: async () =>
          Number(
            (
              await base
                .clearSelect()
                .where((eb) =>
                  eb.or([eb('source_account_id', '=', account), eb('destination_account_id', '=', account)]),
                )
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirst()
            )?.n ?? 0,
          ),
      }),
  );
}
