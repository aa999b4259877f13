// The request journal's SQL. Rows are ordered by (created_at, id), arrival on the server's
// clock then id; a platform's window is its latest `size` rows in that order. Reads cut the
// window themselves (from the size-th newest row on), so they show exactly the window between
// two prunes, which the writer runs now and then (journal.ts).

import { type Expression, type SqlBool, sql } from 'kysely';
import type { Queryable } from '../../db/index.js';
import { type CursorKey, type PageRequest, paginate, storedTime } from '../../db/pagination.js';
import { preparedInsert } from '../../db/prepared.js';
import { requestJournalSchema } from '../../db/migrations/0020_request_journal.js';
import type { RequestJournalTable } from '../../db/schema.js';

export type JournalRow = RequestJournalTable;

/** The columns of a journal row, in the order `insertEntries` takes their values. */
export const JOURNAL_COLUMNS = [
  'id',
  'platform_id',
  'created_at',
  'sandbox_at',
  'method',
  'path',
  'operation_id',
  'status',
  'error_code',
  'duration_ms',
  'request_id',
  'idempotency_key',
  'token_id',
  'agent_id',
  'request_body',
  'response_body',
  'request_hash',
  'fault',
  'answered',
] as const satisfies readonly (keyof JournalRow)[];

/**
 * The row counts of the insert statements, largest first: a batch of any length goes in chunks
 * of these. note: statements of a few fixed sizes keep the store's statement caches small (a
 * statement per row count, up to 500 of them, held 219 MB and pushed the requests' own out).
 */
export const INSERT_COUNTS = [64, 8, 1] as const;
const insertRows = preparedInsert('request_journal', JOURNAL_COLUMNS, 64, { counts: INSERT_COUNTS });

/** Inserts rows given as value lists in the order of JOURNAL_COLUMNS. */
export async function insertEntries(q: Queryable, rows: readonly (readonly unknown[])[]): Promise<void> {
  await insertRows.run(q, rows);
}

/** What an amended entry changes: its answer, whether it was sent, its fault mark. */
export type EntryAmendment = Pick<
  JournalRow,
  'id' | 'status' | 'error_code' | 'duration_ms' | 'response_body' | 'fault' | 'answered'
>;

function amendQuery(q: Queryable, row: EntryAmendment) {
  const { id, status, error_code, duration_ms, response_body, fault, answered } = row;
  return q
    .updateTable('request_journal')
    .set({ status, error_code, duration_ms, response_body, fault, answered })
    .where('id', '=', id);
}

export async function amendEntry(q: Queryable, row: EntryAmendment): Promise<void> {
  await amendQuery(q, row).execute();
}

// ------------------------------------------------------------ a journal file of its own
//
// An embedded store on disk keeps the journal in a file of its own, written by a thread of its
// own (journal-worker.js), which runs this SQL as text. The table is made from migration
// 0020's definition; test/modules/requests-file.test.ts checks that both have the same columns.

/** The journal file's table and index (those of migration 0020), created when missing. */
export function journalFileSchema(q: Queryable): string[] {
  const { table, index } = requestJournalSchema(q.schema);
  return [table.ifNotExists().compile().sql, index.ifNotExists().compile().sql];
}

/** A statement as text and the values of its parameters, for the journal's thread. */
export interface StatementValues {
  sql: string;
  parameters: readonly unknown[];
}

const AMEND_SAMPLE: EntryAmendment = {
  id: '',
  status: null,
  error_code: null,
  duration_ms: 0,
  response_body: null,
  fault: null,
  answered: 0,
};

/** The SQL the journal's thread prepares: an insert per row count, and the other writes. */
export function journalFileSql(q: Queryable) {
  const insert: Record<number, string> = {};
  for (const count of INSERT_COUNTS) {
    const row = Object.fromEntries(JOURNAL_COLUMNS.map((column) => [column, null]));
    // note: or ignore, so that rows moved from the store's table (JournalFile) can be moved again
    // after a crash between their copy and their deletion; ids are fresh otherwise.
    insert[count] = q
      .insertInto('request_journal')
      .orIgnore()
      .values(Array.from({ length: count }, () => row) as never)
      .compile().sql;
  }
  return {
    insert,
    amend: amendQuery(q, AMEND_SAMPLE).compile().sql,
    prune: pruneQuery('', 1).compile(q).sql,
    forget: forgetQuery(q, '').compile().sql,
  };
}

/** An amendment, as the values of journalFileSql's `amend`. */
export function amendValues(q: Queryable, row: EntryAmendment): readonly unknown[] {
  return amendQuery(q, row).compile().parameters;
}

/** A prune to the window, as the values of journalFileSql's `prune`. */
export function pruneValues(q: Queryable, platformId: string, size: number): readonly unknown[] {
  return pruneQuery(platformId, size).compile(q).parameters;
}

function forgetQuery(q: Queryable, platformId: string) {
  return q.deleteFrom('request_journal').where('platform_id', '=', platformId);
}

/** Every row of a platform (a reset), as the values of journalFileSql's `forget`. */
export function forgetValues(q: Queryable, platformId: string): readonly unknown[] {
  return forgetQuery(q, platformId).compile().parameters;
}

/** Rows of the journal table in `q` (the store's, where a file of its own replaces it), oldest first. */
export async function oldestEntries(q: Queryable, limit: number): Promise<JournalRow[]> {
  return q.selectFrom('request_journal').selectAll().orderBy('created_at').orderBy('id').limit(limit).execute();
}

export async function deleteEntries(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await q.deleteFrom('request_journal').where('id', 'in', ids).execute();
}

/**
 * The window's first row (the size-th newest) as a sort key, when the platform has more rows
 * than that; undefined when the whole journal fits in the window.
 */
export async function windowStart(q: Queryable, platformId: string, size: number): Promise<CursorKey | undefined> {
  if (size <= 0) return undefined;
  const row = await q
    .selectFrom('request_journal')
    .select(['created_at', 'id'])
    .where('platform_id', '=', platformId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(size - 1)
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : { createdAt: row.created_at, id: row.id };
}

function pruneQuery(platformId: string, size: number) {
  return sql`
    DELETE FROM request_journal
    WHERE platform_id = ${platformId}
      AND (created_at, id) < (
        SELECT created_at, id FROM request_journal WHERE platform_id = ${platformId}
        ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ${size - 1})`;
}

/** Deletes the platform's rows older than its window, in one statement. */
export async function pruneToWindow(q: Queryable, platformId: string, size: number): Promise<number> {
  const result = await pruneQuery(platformId, size).execute(q);
  return Number(result.numAffectedRows ?? 0n);
}

/** The rows of the window (everything from its first row on). */
function inWindow(start: CursorKey | undefined, table?: string): Expression<SqlBool> {
  if (start === undefined) return sql<SqlBool>`1 = 1`;
  const createdAt = sql.ref(table === undefined ? 'created_at' : `${table}.created_at`);
  const id = sql.ref(table === undefined ? 'id' : `${table}.id`);
  return sql<SqlBool>`(${createdAt}, ${id}) >= (${start.createdAt}, ${start.id})`;
}

export interface EntryFilters {
  operationId?: string | undefined;
  status?: number | undefined;
  code?: string | undefined;
  idempotencyKey?: string | undefined;
  since?: string | undefined;
}

export async function listEntries(
  q: Queryable,
  platformId: string,
  start: CursorKey | undefined,
  filters: EntryFilters,
  page: PageRequest,
) {
  let query = q.selectFrom('request_journal').selectAll().where('platform_id', '=', platformId).where(inWindow(start));
  if (filters.operationId !== undefined) query = query.where('operation_id', '=', filters.operationId);
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.code !== undefined) query = query.where('error_code', '=', filters.code);
  if (filters.idempotencyKey !== undefined) query = query.where('idempotency_key', '=', filters.idempotencyKey);
  if (filters.since !== undefined) query = query.where('created_at', '>=', storedTime(filters.since, 'from'));
  return paginate(query, 'request_journal', page);
}

export async function findEntry(
  q: Queryable,
  platformId: string,
  start: CursorKey | undefined,
  id: string,
): Promise<JournalRow | undefined> {
  return q
    .selectFrom('request_journal')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .where(inWindow(start))
    .executeTakeFirst();
}

// ------------------------------------------------------------------------------ the report

export interface WindowStats {
  requests: number;
  first: string | null;
  last: string | null;
}

export async function windowStats(
  q: Queryable,
  platformId: string,
  start: CursorKey | undefined,
): Promise<WindowStats> {
  const row = await q
    .selectFrom('request_journal')
    .select((eb) => [
      eb.fn.countAll().as('requests'),
      eb.fn.min('created_at').as('first'),
      eb.fn.max('created_at').as('last'),
    ])
    .where('platform_id', '=', platformId)
    .where(inWindow(start))
    .executeTakeFirst();
  return {
    requests: Number(row?.requests ?? 0),
    first: (row?.first as string | null) ?? null,
    last: (row?.last as string | null) ?? null,
  };
}

export interface OperationCount {
  operation_id: string | null;
  status: number | null;
  error_code: string | null;
  answered: number;
  count: number | string | bigint;
}

/** Requests per operation, status, error code and whether they were answered. */
export async function operationCounts(
  q: Queryable,
  platformId: string,
  start: CursorKey | undefined,
): Promise<OperationCount[]> {
  return (await q
    .selectFrom('request_journal')
    .select(['operation_id', 'status', 'error_code', 'answered', (eb) => eb.fn.countAll().as('count')])
    .where('platform_id', '=', platformId)
    .where(inWindow(start))
    .groupBy(['operation_id', 'status', 'error_code', 'answered'])
    .execute()) as OperationCount[];
}

/** Requests of `operationIds` sent without an Idempotency-Key, newest first. */
export async function withoutKey(
  q: Queryable,
  platformId: string,
  start: CursorKey | undefined,
  operationIds: readonly string[],
): Promise<Pick<JournalRow, 'id' | 'operation_id' | 'request_body'>[]> {
  return q
    .selectFrom('request_journal')
    .select(['id', 'operation_id', 'request_body'])
    .where('platform_id', '=', platformId)
    .where(inWindow(start))
    .where('operation_id', 'in', operationIds)
    .where('idempotency_key', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** (operation, key) pairs sent with more than one different request, with their requests, newest first. */
export async function reusedKeys(
  q: Queryable,
  platformId: string,
  start: CursorKey | undefined,
): Promise<Pick<JournalRow, 'id' | 'operation_id' | 'idempotency_key' | 'request_hash'>[]> {
  const pairs = q
    .selectFrom('request_journal')
    .select(['operation_id', 'idempotency_key'])
    .where('platform_id', '=', platformId)
    .where(inWindow(start))
    .where('idempotency_key', 'is not', null)
    .groupBy(['operation_id', 'idempotency_key'])
    .having((eb) => eb.fn.count('request_hash').distinct(), '>', 1);
  return q
    .selectFrom('request_journal as j')
    .innerJoin(pairs.as('p'), (join) =>
      join.onRef('p.operation_id', '=', 'j.operation_id').onRef('p.idempotency_key', '=', 'j.idempotency_key'),
    )
    .select(['j.id', 'j.operation_id', 'j.idempotency_key', 'j.request_hash'])
    .where('j.platform_id', '=', platformId)
    .where(inWindow(start, 'j'))
    .orderBy('j.created_at', 'desc')
    .orderBy('j.id', 'desc')
    .execute();
}

export type FailureRow = Pick<
  JournalRow,
  | 'id'
  | 'created_at'
  | 'method'
  | 'path'
  | 'operation_id'
  | 'status'
  | 'answered'
  | 'error_code'
  | 'idempotency_key'
  | 'request_hash'
>;

const FAILURE_COLUMNS = [
  'id',
  'created_at',
  'method',
  'path',
  'operation_id',
  'status',
  'answered',
  'error_code',
  'idempotency_key',
  'request_hash',
] as const;

/** The latest `limit` requests answered 5xx or 429, or not answered, newest first. */
export async function failures(
  q: Queryable,
  platformId: string,
  start: CursorKey | undefined,
  limit: number,
): Promise<FailureRow[]> {
  return q
    .selectFrom('request_journal')
    .select(FAILURE_COLUMNS)
    .where('platform_id', '=', platformId)
    .where(inWindow(start))
    .where((eb) => eb.or([eb('status', '>=', 500), eb('status', '=', 429), eb('answered', '=', 0)]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The requests of `operationIds` from `from` on (inclusive), oldest first: where retries are looked for. */
export async function requestsFrom(
  q: Queryable,
  platformId: string,
  from: CursorKey,
  operationIds: readonly string[],
): Promise<FailureRow[]> {
  return q
    .selectFrom('request_journal')
    .select(FAILURE_COLUMNS)
    .where('platform_id', '=', platformId)
    .where(inWindow(from))
    .where('operation_id', 'in', operationIds)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}
