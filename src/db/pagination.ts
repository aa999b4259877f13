// One pagination for every list: newest first by default, ordered by (created_at, id) so
// the order is total; the cursor is opaque (base64url of the last row's sort key) and
// `nextCursor` appears only when another page exists.

import { sql, type SelectQueryBuilder } from 'kysely';
import { invalidInput } from '../http/errors.js';

export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;

export interface PageRequest {
  limit?: number | undefined;
  cursor?: string | undefined;
  sortOrder?: 'asc' | 'desc' | undefined;
}

export interface PageResult<Row> {
  rows: Row[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

export interface CursorKey {
  createdAt: string;
  id: string;
}

function encodeCursor(key: CursorKey): string {
  return Buffer.from(`v1|${key.createdAt}|${key.id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): CursorKey {
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const [version, createdAt, id] = parts;
  if (parts.length !== 3 || version !== 'v1' || !createdAt || !id || Number.isNaN(Date.parse(createdAt))) {
    throw invalidInput([{ field: 'cursor', message: 'is not a cursor returned by this list' }]);
  }
  return { createdAt, id };
}

/** Normalizes a date-time filter to the stored form, so text comparison orders correctly. */
export function storedTime(value: string): string {
  return new Date(value).toISOString();
}

/**
 * Runs one page of `query` (a select with its filters, selecting whole rows of `table`) and
 * counts every match. `table` qualifies the sort columns when the query joins. `countAll`,
 * when given, answers the number of matches instead of counting them (a count the store
 * keeps, for a query without filters).
 */
export async function paginate<Row extends { created_at: string; id: string }>(
  // note: Kysely's builder types do not survive being passed through a generic helper.
  query: SelectQueryBuilder<any, any, Row>,
  table: string,
  page: PageRequest,
  countAll?: () => Promise<number>,
): Promise<PageResult<Row>> {
  const limit = Math.min(Math.max(page.limit ?? PAGE_SIZE_DEFAULT, 1), PAGE_SIZE_MAX);
  const order = page.sortOrder ?? 'desc';
  const createdAt = sql.ref(`${table}.created_at`);
  const id = sql.ref(`${table}.id`);

  let totalCount: number;
  if (countAll !== undefined) {
    totalCount = await countAll();
  } else {
    const countRow = await query
      .clearSelect()
      .select((eb) => eb.fn.countAll().as('count'))
      .executeTakeFirst();
    totalCount = Number((countRow as { count?: number | string } | undefined)?.count ?? 0);
  }

  let pageQuery = query;
  if (page.cursor !== undefined) {
    const key = decodeCursor(page.cursor);
    const op = order === 'desc' ? sql`<` : sql`>`;
    pageQuery = pageQuery.where(
      sql<boolean>`(${createdAt} ${op} ${key.createdAt} OR (${createdAt} = ${key.createdAt} AND ${id} ${op} ${key.id}))`,
    );
  }
  const rows = (await pageQuery
    .orderBy(createdAt, order)
    .orderBy(id, order)
    .limit(limit + 1)
    .execute()) as Row[];
  const hasMore = rows.length > limit;
  if (hasMore) rows.length = limit;
  const last = rows[rows.length - 1];
  return {
    rows,
    hasMore,
    ...(hasMore && last ? { nextCursor: encodeCursor({ createdAt: last.created_at, id: last.id }) } : {}),
    totalCount,
  };
}

/**
 * paginate() for a list whose page query is prepared by the caller (see db/prepared.ts):
 * `fetch` answers at most `limit` rows in `order`, after `after` when given. Same rules,
 * same cursors.
 */
export async function paginatePrepared<Row extends { created_at: string; id: string }>(
  page: PageRequest,
  fetch: (limit: number, order: 'asc' | 'desc', after: CursorKey | undefined) => Promise<Row[]>,
  countAll: () => Promise<number>,
): Promise<PageResult<Row>> {
  const limit = Math.min(Math.max(page.limit ?? PAGE_SIZE_DEFAULT, 1), PAGE_SIZE_MAX);
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  const totalCount = await countAll();
  const rows = await fetch(limit + 1, page.sortOrder ?? 'desc', after);
  const hasMore = rows.length > limit;
  if (hasMore) rows.length = limit;
  const last = rows[rows.length - 1];
  return {
    rows,
    hasMore,
    ...(hasMore && last ? { nextCursor: encodeCursor({ createdAt: last.created_at, id: last.id }) } : {}),
    totalCount,
  };
}

/**
 * One page of rows held in memory (fixed sandbox directories), with the same order, cursor
 * and page-size rules as paginate().
 */
export function paginateRows<Row extends { created_at: string; id: string }>(all: readonly Row[], page: PageRequest): PageResult<Row> {
  const limit = Math.min(Math.max(page.limit ?? PAGE_SIZE_DEFAULT, 1), PAGE_SIZE_MAX);
  const sign = (page.sortOrder ?? 'desc') === 'desc' ? -1 : 1;
  const compare = (a: CursorKey, b: CursorKey) =>
    sign * (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const keyOf = (row: Row): CursorKey => ({ createdAt: row.created_at, id: row.id });
  let rows = [...all].sort((a, b) => compare(keyOf(a), keyOf(b)));
  if (page.cursor !== undefined) {
    const after = decodeCursor(page.cursor);
    rows = rows.filter((row) => compare(keyOf(row), after) > 0);
  }
  const hasMore = rows.length > limit;
  rows = rows.slice(0, limit);
  const last = rows[rows.length - 1];
  return {
    rows,
    hasMore,
    ...(hasMore && last ? { nextCursor: encodeCursor(keyOf(last)) } : {}),
    totalCount: all.length,
  };
}

/** The page envelope of the reference: data, hasMore, nextCursor only when hasMore, totalCount. */
export function toPage<Row, Item>(result: PageResult<Row>, present: (row: Row) => Item) {
  return {
    data: result.rows.map(present),
    hasMore: result.hasMore,
    ...(result.nextCursor !== undefined ? { nextCursor: result.nextCursor } : {}),
    totalCount: result.totalCount,
  };
}
