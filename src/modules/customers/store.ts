import { sql, type Queryable } from '../../db/index.js';
import { createdUpdatedBounds, paginate, type PageRequest } from '../../db/pagination.js';
import type { PrefetchRead } from '../../db/prefetch.js';
import { prepare } from '../../db/prepared.js';
import type { CustomersTable } from '../../db/schema.js';

export type CustomerRow = CustomersTable;

export async function insertCustomer(q: Queryable, row: CustomerRow): Promise<void> {
  await q.insertInto('customers').values(row).execute();
}

const byId = prepare<{ platformId: string; id: string }, CustomerRow>((k, param) =>
  k.selectFrom('customers').selectAll().where('platform_id', '=', param('platformId')).where('id', '=', param('id')),
);

/** A customer of the platform, deleted or not. */
export async function findCustomer(q: Queryable, platformId: string, id: string): Promise<CustomerRow | undefined> {
  return byId.first(q, { platformId, id });
}

const ofInternalAccount = prepare<{ platformId: string; accountId: string }, CustomerRow>((k, param) =>
  k
    .selectFrom('customers')
    .selectAll()
    .where('platform_id', '=', param('platformId'))
    .where('id', '=', (eb) =>
      eb
        .selectFrom('internal_accounts')
        .select('internal_accounts.customer_id')
        .where('internal_accounts.platform_id', '=', param('platformId'))
        .where('internal_accounts.id', '=', param('accountId')),
    ),
);

/**
 * For prefetch() (db/prefetch.ts): the customer who owns an internal account, kept as what
 * findCustomer reads for that customer (a platform's own account has none: nothing is kept).
 */
export function accountCustomerRead(platformId: string, accountId: string): PrefetchRead {
  return {
    compile: ofInternalAccount.read({ platformId, accountId }).compile,
    standsFor: (q, row) => byId.read({ platformId, id: String(row.id) }).compile(q),
  };
}

export async function findActiveByPlatformCustomerId(
  q: Queryable,
  platformId: string,
  platformCustomerId: string,
): Promise<CustomerRow | undefined> {
  return q
    .selectFrom('customers')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('platform_customer_id', '=', platformCustomerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function findActiveByUmaAddress(
  q: Queryable,
  platformId: string,
  umaAddress: string,
): Promise<CustomerRow | undefined> {
  return q
    .selectFrom('customers')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('uma_address', '=', umaAddress)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export interface CustomerKey {
  id: string;
  created_at: string;
}

/** Up to `limit` customers of the platform not deleted, in creation order, after `after` when given. */
export async function activeCustomerKeys(
  q: Queryable,
  platformId: string,
  after: CustomerKey | undefined,
  limit: number,
): Promise<CustomerKey[]> {
  let query = q
    .selectFrom('customers')
    .select(['id', 'created_at'])
    .where('platform_id', '=', platformId)
    .where('deleted_at', 'is', null);
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.created_at),
        eb.and([eb('created_at', '=', after.created_at), eb('id', '>', after.id)]),
      ]),
    );
  }
  return query.orderBy('created_at').orderBy('id').limit(limit).execute();
}

export interface CustomerFilters {
  platformCustomerId?: string | undefined;
  customerType?: string | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
  region?: string | undefined;
  currency?: string | undefined;
  umaAddress?: string | undefined;
  isIncludingDeleted?: boolean | undefined;
}

export async function listCustomers(q: Queryable, platformId: string, filters: CustomerFilters, page: PageRequest) {
  let query = q.selectFrom('customers').selectAll().where('platform_id', '=', platformId);
  if (!filters.isIncludingDeleted) query = query.where('deleted_at', 'is', null);
  if (filters.platformCustomerId !== undefined)
    query = query.where('platform_customer_id', '=', filters.platformCustomerId);
  if (filters.customerType !== undefined) query = query.where('customer_type', '=', filters.customerType);
  if (filters.region !== undefined) query = query.where('region', '=', filters.region);
  if (filters.umaAddress !== undefined) query = query.where('uma_address', '=', filters.umaAddress);
  if (filters.currency !== undefined) {
    // Currencies are a JSON array of codes; a code is matched with its quotes so USD never
    // matches USDC. Anything but letters and digits (LIKE wildcards included) matches nothing.
    query = /^[A-Za-z0-9]+$/.test(filters.currency)
      ? query.where('currencies', 'like', `%${JSON.stringify(filters.currency)}%`)
      : query.where(sql<boolean>`1 = 0`);
  }
  for (const [column, op, value] of createdUpdatedBounds(filters)) query = query.where(column, op, value);
  return paginate(query, 'customers', page);
}

export async function updateCustomer(
  q: Queryable,
  id: string,
  changes: Partial<Omit<CustomerRow, 'id' | 'platform_id' | 'customer_type' | 'created_at'>>,
): Promise<void> {
  await q.updateTable('customers').set(changes).where('id', '=', id).execute();
}
