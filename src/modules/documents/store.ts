import type { Queryable } from '../../db/index.js';
import { paginate, type PageRequest } from '../../db/pagination.js';
import type { DocumentsTable } from '../../db/schema.js';

export type DocumentRow = DocumentsTable;
/** A document without its file: what every read but the download needs. */
export type DocumentMeta = Omit<DocumentRow, 'content'>;

const META = [
  'id',
  'platform_id',
  'holder_id',
  'customer_id',
  'document_type',
  'side',
  'country',
  'document_number',
  'issuing_authority',
  'file_name',
  'content_type',
  'size_bytes',
  'sha256',
  'quality_issue',
  'submitted_at',
  'created_at',
  'updated_at',
] as const;

export async function insertDocument(q: Queryable, row: DocumentRow): Promise<void> {
  await q.insertInto('documents').values(row).execute();
}

export async function findDocument(q: Queryable, platformId: string, id: string): Promise<DocumentMeta | undefined> {
  return q
    .selectFrom('documents')
    .select(META)
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findDocumentFile(q: Queryable, platformId: string, id: string) {
  return q
    .selectFrom('documents')
    .select(['file_name', 'content_type', 'content'])
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listDocuments(q: Queryable, platformId: string, holderId: string | undefined, page: PageRequest) {
  let query = q.selectFrom('documents').select(META).where('platform_id', '=', platformId);
  if (holderId !== undefined) query = query.where('holder_id', '=', holderId);
  return paginate(query, 'documents', page);
}

/** The documents of the given holders, oldest first. */
export async function documentsOfHolders(
  q: Queryable,
  platformId: string,
  holderIds: readonly string[],
): Promise<DocumentMeta[]> {
  if (holderIds.length === 0) return [];
  return q
    .selectFrom('documents')
    .select(META)
    .where('platform_id', '=', platformId)
    .where('holder_id', 'in', holderIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function updateDocument(
  q: Queryable,
  id: string,
  changes: Partial<Omit<DocumentRow, 'id' | 'platform_id' | 'created_at'>>,
): Promise<void> {
  await q.updateTable('documents').set(changes).where('id', '=', id).execute();
}

export async function deleteDocument(q: Queryable, id: string): Promise<void> {
  await q.deleteFrom('documents').where('id', '=', id).execute();
}

export async function flagDocuments(q: Queryable, ids: readonly string[], issue: string): Promise<void> {
  if (ids.length === 0) return;
  await q.updateTable('documents').set({ quality_issue: issue }).where('id', 'in', ids).execute();
}

/** Marks every document of a customer (and of its owners) as part of a submission. */
export async function markSubmitted(q: Queryable, platformId: string, customerId: string, now: string): Promise<void> {
  await q
    .updateTable('documents')
    .set({ submitted_at: now })
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('submitted_at', 'is', null)
    .execute();
}
