import type { Queryable } from '../../db/index.js';
import { paginate, type PageRequest } from '../../db/pagination.js';
import type { BeneficialOwnersTable } from '../../db/schema.js';

export type OwnerRow = BeneficialOwnersTable;

export async function insertOwner(q: Queryable, row: OwnerRow): Promise<void> {
  await q.insertInto('beneficial_owners').values(row).execute();
}

export async function findOwner(q: Queryable, platformId: string, id: string): Promise<OwnerRow | undefined> {
  return q
    .selectFrom('beneficial_owners')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listOwners(q: Queryable, platformId: string, customerId: string, page: PageRequest) {
  const query = q
    .selectFrom('beneficial_owners')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId);
  return paginate(query, 'beneficial_owners', page);
}

/** Every owner of the given customers, oldest first. */
export async function ownersOf(q: Queryable, platformId: string, customerIds: readonly string[]): Promise<OwnerRow[]> {
  if (customerIds.length === 0) return [];
  return q
    .selectFrom('beneficial_owners')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', 'in', customerIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function updateOwner(
  q: Queryable,
  id: string,
  changes: Partial<Pick<OwnerRow, 'roles' | 'ownership_percentage' | 'personal_info' | 'kyc_status' | 'updated_at'>>,
): Promise<void> {
  await q.updateTable('beneficial_owners').set(changes).where('id', '=', id).execute();
}
