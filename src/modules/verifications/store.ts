import type { Queryable } from '../../db/index.js';
import { paginate, type PageRequest } from '../../db/pagination.js';
import type { KycLinksTable, VerificationsTable } from '../../db/schema.js';

export type VerificationRow = VerificationsTable;
export type KycLinkRow = KycLinksTable;

export async function insertVerification(q: Queryable, row: VerificationRow): Promise<void> {
  await q.insertInto('verifications').values(row).execute();
}

export async function findVerification(
  q: Queryable,
  platformId: string,
  id: string,
): Promise<VerificationRow | undefined> {
  return q
    .selectFrom('verifications')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listVerifications(
  q: Queryable,
  platformId: string,
  filters: { customerId?: string | undefined; status?: string | undefined },
  page: PageRequest,
) {
  let query = q.selectFrom('verifications').selectAll().where('platform_id', '=', platformId);
  if (filters.customerId !== undefined) query = query.where('customer_id', '=', filters.customerId);
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  return paginate(query, 'verifications', page);
}

/** Every verification of a customer, oldest first. */
export async function verificationsOf(
  q: Queryable,
  platformId: string,
  customerId: string,
): Promise<VerificationRow[]> {
  return q
    .selectFrom('verifications')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function updateVerification(
  q: Queryable,
  id: string,
  changes: Pick<VerificationRow, 'status' | 'updated_at'>,
): Promise<void> {
  await q.updateTable('verifications').set(changes).where('id', '=', id).execute();
}

export async function insertKycLink(q: Queryable, row: KycLinkRow): Promise<void> {
  await q.insertInto('kyc_links').values(row).execute();
}

export async function findKycLink(q: Queryable, id: string): Promise<KycLinkRow | undefined> {
  return q.selectFrom('kyc_links').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateKycLink(
  q: Queryable,
  id: string,
  changes: Pick<KycLinkRow, 'status' | 'updated_at'>,
): Promise<void> {
  await q.updateTable('kyc_links').set(changes).where('id', '=', id).execute();
}
