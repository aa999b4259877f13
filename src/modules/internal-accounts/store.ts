import { sql } from 'kysely';
import type { Queryable } from '../../db/index.js';
import { paginate, type PageRequest } from '../../db/pagination.js';
import type { PrefetchRead } from '../../db/prefetch.js';
import { prepare, preparedInsert } from '../../db/prepared.js';
import type { InternalAccountsTable } from '../../db/schema.js';

export type InternalAccountRow = InternalAccountsTable;

/** An internal account with its ledger balances (read as text, see ledger/store.ts). */
export type InternalAccountView = InternalAccountRow & { available: string; held: string; balance_updated_at: string };

export function ownerKey(customerId: string | null): string {
  return customerId ?? 'platform';
}

/** Creates the account unless the owner already has one of this type and currency. */
export async function insertInternalAccount(q: Queryable, row: InternalAccountRow): Promise<boolean> {
  const result = await q
    .insertInto('internal_accounts')
    .values(row)
    .onConflict((oc) => oc.columns(['platform_id', 'owner_key', 'type', 'currency']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

const FRESH_COLUMNS = [
  'id',
  'platform_id',
  'customer_id',
  'owner_key',
  'type',
  'currency',
  'status',
  'created_at',
  'updated_at',
] as const;

// The accounts of an owner that has none yet: no conflict is possible, and nothing reads them
// back before the next statement, which they travel with on PostgreSQL (db/deferred.ts).
const freshInsert = preparedInsert('internal_accounts', FRESH_COLUMNS, 16, { deferred: true });

/** Creates the accounts of an owner that has none (created, or emptied, in this transaction). */
export async function insertFreshAccounts(
  q: Queryable,
  rows: readonly Pick<InternalAccountRow, (typeof FRESH_COLUMNS)[number]>[],
): Promise<void> {
  await freshInsert.run(
    q,
    rows.map((row) => FRESH_COLUMNS.map((column) => row[column])),
  );
}

export async function ownerAccounts(
  q: Queryable,
  platformId: string,
  customerId: string | null,
): Promise<InternalAccountRow[]> {
  return q
    .selectFrom('internal_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('owner_key', '=', ownerKey(customerId))
    .execute();
}

const withBalances = (k: Queryable) =>
  k
    .selectFrom('internal_accounts')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'internal_accounts.id')
    .selectAll('internal_accounts')
    .select([
      sql<string>`CAST(ledger_accounts.available AS TEXT)`.as('available'),
      sql<string>`CAST(ledger_accounts.held AS TEXT)`.as('held'),
      'ledger_accounts.updated_at as balance_updated_at',
    ]);

const byId = prepare<{ platformId: string; id: string }, InternalAccountView>((k, param) =>
  withBalances(k)
    .where('internal_accounts.platform_id', '=', param('platformId'))
    .where('internal_accounts.id', '=', param('id')),
);

export async function findInternalAccount(
  q: Queryable,
  platformId: string,
  id: string,
): Promise<InternalAccountView | undefined> {
  return byId.first(q, { platformId, id });
}

/** The read of findInternalAccount, for prefetch() (db/prefetch.ts). */
export function internalAccountRead(platformId: string, id: string): PrefetchRead {
  return byId.read({ platformId, id });
}

export interface InternalAccountFilters {
  currency?: string | undefined;
  type?: string | undefined;
}

export async function listCustomerAccounts(
  q: Queryable,
  platformId: string,
  filters: InternalAccountFilters & { customerId?: string | undefined },
  page: PageRequest,
) {
  let query = withBalances(q)
    .where('internal_accounts.platform_id', '=', platformId)
    .where('internal_accounts.customer_id', 'is not', null);
  if (filters.customerId !== undefined) query = query.where('internal_accounts.customer_id', '=', filters.customerId);
  if (filters.currency !== undefined) query = query.where('internal_accounts.currency', '=', filters.currency);
  if (filters.type !== undefined) query = query.where('internal_accounts.type', '=', filters.type);
  return paginate(query, 'internal_accounts', page);
}

export async function listPlatformAccounts(
  q: Queryable,
  platformId: string,
  filters: InternalAccountFilters,
): Promise<InternalAccountView[]> {
  let query = withBalances(q)
    .where('internal_accounts.platform_id', '=', platformId)
    .where('internal_accounts.customer_id', 'is', null);
  if (filters.currency !== undefined) query = query.where('internal_accounts.currency', '=', filters.currency);
  if (filters.type !== undefined) query = query.where('internal_accounts.type', '=', filters.type);
  return query.orderBy('internal_accounts.created_at').orderBy('internal_accounts.id').execute();
}

export async function setPrivateEnabled(
  q: Queryable,
  platformId: string,
  id: string,
  enabled: boolean,
  nowIso: string,
): Promise<void> {
  await q
    .updateTable('internal_accounts')
    .set({ private_enabled: enabled ? 1 : 0, updated_at: nowIso })
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .execute();
}
