import type { Queryable } from '../../db/index.js';
import type { ReceiverLookupsTable } from '../../db/schema.js';

export type LookupRow = ReceiverLookupsTable;

export async function insertLookup(q: Queryable, row: LookupRow): Promise<void> {
  await q.insertInto('receiver_lookups').values(row).execute();
}

export async function findLookup(q: Queryable, platformId: string, id: string): Promise<LookupRow | undefined> {
  return q
    .selectFrom('receiver_lookups')
    .selectAll()
    .where('id', '=', id)
    .where('platform_id', '=', platformId)
    .executeTakeFirst();
}
