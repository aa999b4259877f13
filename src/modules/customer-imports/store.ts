import { sql, type Queryable } from '../../db/index.js';
import type { CustomerImportJobsTable } from '../../db/schema.js';

export type JobRow = CustomerImportJobsTable;

export async function insertJob(q: Queryable, row: JobRow): Promise<void> {
  await q.insertInto('customer_import_jobs').values(row).execute();
}

export async function findJob(q: Queryable, platformId: string, id: string): Promise<JobRow | undefined> {
  return q
    .selectFrom('customer_import_jobs')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateJob(
  q: Queryable,
  id: string,
  changes: Partial<Pick<JobRow, 'status' | 'csv' | 'total' | 'updated_at' | 'completed_at'>>,
): Promise<void> {
  await q.updateTable('customer_import_jobs').set(changes).where('id', '=', id).execute();
}

/** Counts one more processed row, in the transaction that processed it. */
/**
 * Counts row `index` as processed. It must be the next row: another run that processed it
 * first makes this throw, so the caller's transaction (the row's effect) rolls back.
 */
export async function countRow(
  q: Queryable,
  id: string,
  index: number,
  succeeded: boolean,
  now: string,
): Promise<void> {
  const result = await q
    .updateTable('customer_import_jobs')
    .set({
      processed: sql`processed + 1`,
      successful: succeeded ? sql`successful + 1` : sql`successful`,
      failed: succeeded ? sql`failed` : sql`failed + 1`,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('processed', '=', index)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) throw new Error(`row ${index} of import ${id} was processed by another run`);
}

export async function insertError(q: Queryable, jobId: string, entry: unknown): Promise<void> {
  const next = await q
    .selectFrom('customer_import_errors')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('job_id', '=', jobId)
    .executeTakeFirst();
  await q
    .insertInto('customer_import_errors')
    .values({ job_id: jobId, position: Number(next?.count ?? 0), entry: JSON.stringify(entry) })
    .execute();
}

export async function errorsOf(q: Queryable, jobId: string): Promise<unknown[]> {
  const rows = await q
    .selectFrom('customer_import_errors')
    .select('entry')
    .where('job_id', '=', jobId)
    .orderBy('position')
    .execute();
  return rows.map((row) => JSON.parse(row.entry) as unknown);
}
