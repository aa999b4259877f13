// The ledger's SQL. Only src/ledger/ imports this file.

import { sql } from 'kysely';
import { onPostgres, type Queryable } from '../db/index.js';
import { prepare, preparedInsert } from '../db/prepared.js';
import type { LedgerAccountsTable } from '../db/schema.js';

/** Balances are read as text: 64-bit sums can pass 2^53, and the two drivers return different types. */
export interface BalanceRow {
  id: string;
  platform_id: string;
  currency: string;
  available: string;
  held: string;
}

const balanceColumns = (k: Queryable) =>
  k
    .selectFrom('ledger_accounts')
    .select(['id', 'platform_id', 'currency'])
    .select([sql<string>`CAST(available AS TEXT)`.as('available'), sql<string>`CAST(held AS TEXT)`.as('held')]);

const readBalance = prepare<{ id: string; platformId: string }, BalanceRow>((k, param) =>
  balanceColumns(k).where('id', '=', param('id')).where('platform_id', '=', param('platformId')),
);

const lockBalance = prepare<{ id: string; platformId: string }, BalanceRow>((k, param) =>
  balanceColumns(k).where('id', '=', param('id')).where('platform_id', '=', param('platformId')).forUpdate(),
);

/**
 * Reads an account's balances. Without `lock` no lock is taken: writes go through
 * addToBalance, which checks them again. `lock` takes the row lock on PostgreSQL, for a
 * decision that needs the balance as it will stay (SQLite transactions are exclusive already).
 */
export async function findBalance(
  q: Queryable,
  platformId: string,
  id: string,
  lock = false,
): Promise<BalanceRow | undefined> {
  return (lock && onPostgres(q) ? lockBalance : readBalance).first(q, { id, platformId });
}

const changeBalance = prepare<
  { id: string; available: bigint; held: bigint; total: bigint; max: bigint; updatedAt: string },
  { available: string; held: string }
>((k, param) =>
  k
    .updateTable('ledger_accounts')
    .set({
      available: sql`available + ${param('available')}`,
      held: sql`held + ${param('held')}`,
      updated_at: param('updatedAt'),
    })
    .where('id', '=', param('id'))
    .where(sql`available + ${param('available')}`, '>=', sql`0`)
    .where(sql`held + ${param('held')}`, '>=', sql`0`)
    .where((eb) =>
      eb.or([
        eb(sql`CAST(${param('total')} AS BIGINT)`, '<=', sql`0`),
        eb(sql`available + held + ${param('total')}`, '<=', param('max')),
      ]),
    )
    .returning([sql<string>`CAST(available AS TEXT)`.as('available'), sql<string>`CAST(held AS TEXT)`.as('held')]),
);

/**
 * Adds the changes to an account's balances in one statement (taking its row lock on
 * PostgreSQL), unless a bucket would go below zero or a credit would take the total past
 * `max`; the balances after it, or undefined when refused (or when the account does not
 * exist).
 */
export async function addToBalance(
  q: Queryable,
  id: string,
  change: { available: bigint; held: bigint },
  max: bigint,
  updatedAt: string,
): Promise<{ available: string; held: string } | undefined> {
  return changeBalance.first(q, {
    id,
    available: change.available,
    held: change.held,
    total: change.available + change.held,
    max,
    updatedAt,
  });
}

export interface PostingRow {
  id: string;
  platformId: string;
  currency: string;
  kind: string;
  transactionId: string | null;
  createdAt: string;
}

export interface EntryRow {
  postingId: string;
  line: number;
  platformId: string;
  accountId: string;
  bucket: string;
  currency: string;
  amount: bigint;
}

// Postings and entries are new rows that nothing reads back before the commit: on
// PostgreSQL they travel with the balance update that follows them (db/deferred.ts).
const DEFERRED = { deferred: true };
const postingsInsert = preparedInsert(
  'ledger_postings',
  ['id', 'platform_id', 'currency', 'kind', 'transaction_id', 'created_at'],
  8,
  DEFERRED,
);
const entriesInsert = preparedInsert(
  'ledger_entries',
  ['posting_id', 'line', 'platform_id', 'account_id', 'bucket', 'currency', 'amount'],
  8,
  DEFERRED,
);

export async function insertPostings(q: Queryable, rows: PostingRow[]): Promise<void> {
  await postingsInsert.run(
    q,
    rows.map((r) => [r.id, r.platformId, r.currency, r.kind, r.transactionId, r.createdAt]),
  );
}

export async function insertEntries(q: Queryable, rows: EntryRow[]): Promise<void> {
  await entriesInsert.run(
    q,
    rows.map((r) => [r.postingId, r.line, r.platformId, r.accountId, r.bucket, r.currency, r.amount]),
  );
}

const ACCOUNT_COLUMNS = [
  'id',
  'platform_id',
  'currency',
  'kind',
  'created_at',
  'updated_at',
  'available',
  'held',
] as const;
const freshAccountsInsert = preparedInsert('ledger_accounts', ACCOUNT_COLUMNS, 32, DEFERRED);

/** Creates ledger accounts whose ids are new (no conflict possible), at zero balances. */
export async function insertFreshAccounts(
  q: Queryable,
  rows: readonly Omit<LedgerAccountsTable, 'available' | 'held'>[],
): Promise<void> {
  await freshAccountsInsert.run(
    q,
    rows.map((r) => [r.id, r.platform_id, r.currency, r.kind, r.created_at, r.updated_at, 0, 0]),
  );
}

/** Creates a ledger account unless it exists; true when this call created it. */
export async function createAccount(
  q: Queryable,
  row: Omit<LedgerAccountsTable, 'available' | 'held'>,
): Promise<boolean> {
  const result = await q
    .insertInto('ledger_accounts')
    .values({ ...row, available: 0, held: 0 })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export interface CurrencySum {
  currency: string;
  sum: string;
  postings: string;
}

export interface EntrySumRow {
  account_id: string;
  bucket: string;
  currency: string;
  sum: string;
}

/**
 * The sums of a platform's entries per account and bucket, in one pass over them: on either
 * store a read of the platform's part of ledger_entries_account (migration 0019), which holds
 * these columns in this order.
 */
export async function entrySums(q: Queryable, platformId: string): Promise<EntrySumRow[]> {
  const result = await sql<EntrySumRow>`
    SELECT account_id, bucket, currency, CAST(SUM(amount) AS TEXT) AS sum
    FROM ledger_entries WHERE platform_id = ${platformId}
    GROUP BY account_id, bucket, currency`.execute(q);
  return result.rows;
}

export async function postingCounts(
  q: Queryable,
  platformId: string,
): Promise<{ currency: string; postings: string }[]> {
  const result = await sql<{ currency: string; postings: string }>`
    SELECT currency, CAST(COUNT(*) AS TEXT) AS postings FROM ledger_postings WHERE platform_id = ${platformId} GROUP BY currency`.execute(
    q,
  );
  return result.rows;
}

export async function allAccounts(q: Queryable, platformId: string): Promise<(BalanceRow & { kind: string })[]> {
  const result = await sql<BalanceRow & { kind: string }>`
    SELECT id, platform_id, currency, kind, CAST(available AS TEXT) AS available, CAST(held AS TEXT) AS held
    FROM ledger_accounts WHERE platform_id = ${platformId} ORDER BY id`.execute(q);
  return result.rows;
}
