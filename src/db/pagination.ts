// One pagination for every list: newest first by default, ordered by (created_at, id) so
// the order is total; the cursor is opaque (base64url of the last row's sort key) and
// `nextCursor` appears only when another page exists.

import { sql, type SelectQueryBuilder } from 'kysely';
import { LAST_INSTANT_MS } from '../clock.js';
import { invalidInput } from '../http/errors.js';
import type { Queryable } from './index.js';

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

/**
 * Normalizes a date-time filter to the stored form (millisecond precision), so text
 * comparison orders correctly. A bound with digits past the millisecond keeps its meaning:
 * a lower bound (`from`, inclusive) moves up to the next whole millisecond, an upper one
 * (`to`, inclusive) down, so nothing stored outside the instant asked for matches.
 */
export function storedTime(value: string, bound: 'from' | 'to'): string {
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
  const exact = fraction.length <= 3 ? value : value.replace(`.${fraction}`, `.${fraction.slice(0, 3)}`);
  const up = bound === 'from' && /[1-9]/.test(fraction.slice(3)) ? 1 : 0;
  const ms = Date.parse(exact) + up;
  // Past the last instant railyard keeps (year 10000 as text sorts before year 2026): a text
  // above every stored time, so a lower bound there matches nothing.
  return ms > LAST_INSTANT_MS ? '9999-12-31T23:59:59.999Z~' : new Date(ms).toISOString();
}

/** The createdAfter / createdBefore / updatedAfter / updatedBefore filters of a list, as bounds on its columns. */
export function createdUpdatedBounds(filters: {
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
}): ['created_at' | 'updated_at', '>=' | '<=', string][] {
  const bounds: ['created_at' | 'updated_at', '>=' | '<=', string][] = [];
  if (filters.createdAfter !== undefined) bounds.push(['created_at', '>=', storedTime(filters.createdAfter, 'from')]);
  if (filters.createdBefore !== undefined) bounds.push(['created_at', '<=', storedTime(filters.createdBefore, 'to')]);
  if (filters.updatedAfter !== undefined) bounds.push(['updated_at', '>=', storedTime(filters.updatedAfter, 'from')]);
  if (filters.updatedBefore !== undefined) bounds.push(['updated_at', '<=', storedTime(filters.updatedBefore, 'to')]);
  return bounds;
}

/** The page size a request asks for, within the reference's bounds. */
export function pageLimit(page: PageRequest): number {
  return Math.min(Math.max(page.limit ?? PAGE_SIZE_DEFAULT, 1), PAGE_SIZE_MAX);
}

/** Closes a page from up to limit + 1 rows in page order: the extra row only says there is more. */
function closePage<Row extends { created_at: string; id: string }>(
  rows: Row[],
  limit: number,
  totalCount: number,
): PageResult<Row> {
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

/** The rows after the cursor, in page order: one row-value comparison, a range of an index ending (created_at, id). */
function afterCursor(table: string | undefined, order: 'asc' | 'desc', key: CursorKey) {
  const createdAt = sql.ref(table === undefined ? 'created_at' : `${table}.created_at`);
  const id = sql.ref(table === undefined ? 'id' : `${table}.id`);
  const op = order === 'desc' ? sql`<` : sql`>`;
  return sql<boolean>`(${createdAt}, ${id}) ${op} (${key.createdAt}, ${key.id})`;
}

/**
 * Runs one page of `query` (a select with its filters, selecting whole rows of `table`) and
 * counts every match. `table` qualifies the sort columns when the query joins. `count`, when
 * given, answers the count instead (with the count of the query at hand, for its fallback).
 */
export async function paginate<Row extends { created_at: string; id: string }>(
  // note: Kysely's builder types do not survive being passed through a generic helper.
  // biome-ignore lint/suspicious/noExplicitAny: see the note above
  query: SelectQueryBuilder<any, any, Row>,
  table: string,
  page: PageRequest,
  count?: (countQuery: () => Promise<number>) => Promise<number>,
): Promise<PageResult<Row>> {
  const limit = pageLimit(page);
  const order = page.sortOrder ?? 'desc';
  const countQuery = async () => {
    const countRow = await query
      .clearSelect()
      .select((eb) => eb.fn.countAll().as('count'))
      .executeTakeFirst();
    return Number((countRow as { count?: number | string } | undefined)?.count ?? 0);
  };

  let pageQuery = query;
  if (page.cursor !== undefined) pageQuery = pageQuery.where(afterCursor(table, order, decodeCursor(page.cursor)));
  const [totalCount, rows] = await Promise.all([
    count === undefined ? countQuery() : count(countQuery),
    pageQuery
      .orderBy(sql.ref(`${table}.created_at`), order)
      .orderBy(sql.ref(`${table}.id`), order)
      .limit(limit + 1)
      .execute() as Promise<Row[]>,
  ]);
  return closePage(rows, limit, totalCount);
}

/**
 * paginate() for a list that is the union of several queries of one table (rows matching
 * either of two indexes): each branch gives its first rows in page order from its own
 * index, and the page is the first of their merge (a row in several branches counts once).
 */
export async function paginateUnion<Row extends { created_at: string; id: string }>(
  q: Queryable,
  // biome-ignore lint/suspicious/noExplicitAny: see paginate()
  branches: SelectQueryBuilder<any, any, Row>[],
  page: PageRequest,
  countAll: () => Promise<number>,
): Promise<PageResult<Row>> {
  const limit = pageLimit(page);
  const order = page.sortOrder ?? 'desc';
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  const direction = sql.raw(order === 'desc' ? 'DESC' : 'ASC');
  const parts = branches.map((branch, i) => {
    const ordered = (after === undefined ? branch : branch.where(afterCursor(undefined, order, after)))
      .orderBy('created_at', order)
      .orderBy('id', order)
      .limit(limit + 1);
    // A branch with its own ORDER BY and LIMIT stands as a subquery in the compound select.
    return sql`SELECT * FROM ${ordered} AS ${sql.id(`b${i}`)}`;
  });
  const [totalCount, result] = await Promise.all([
    countAll(),
    sql<Row>`${sql.join(parts, sql` UNION `)} ORDER BY created_at ${direction}, id ${direction} LIMIT ${limit + 1}`.execute(
      q,
    ),
  ]);
  return closePage(result.rows, limit, totalCount);
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
  const limit = pageLimit(page);
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  const totalCount = await countAll();
  return closePage(await fetch(limit + 1, page.sortOrder ?? 'desc', after), limit, totalCount);
}

/**
 * One page of rows held in memory (fixed sandbox directories), with the same order, cursor
 * and page-size rules as paginate().
 */
export function paginateRows<Row extends { created_at: string; id: string }>(
  all: readonly Row[],
  page: PageRequest,
): PageResult<Row> {
  const limit = pageLimit(page);
  const sign = (page.sortOrder ?? 'desc') === 'desc' ? -1 : 1;
  const compare = (a: CursorKey, b: CursorKey) =>
    sign * (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const keyOf = (row: Row): CursorKey => ({ createdAt: row.created_at, id: row.id });
  let rows = [...all].sort((a, b) => compare(keyOf(a), keyOf(b)));
  if (page.cursor !== undefined) {
    const after = decodeCursor(page.cursor);
    rows = rows.filter((row) => compare(keyOf(row), after) > 0);
  }
  return closePage(rows.slice(0, limit + 1), limit, all.length);
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
