// The SQL of the inspection endpoints: the platform's event log. (The ledger's history is read
// through src/ledger/history.ts; deliveries through src/events/.)

import { type Expression, type ExpressionBuilder, sql, type SqlBool } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import { paginate, storedTime, type PageRequest, type PageResult } from '../../db/pagination.js';
import type { Database, EventsTable } from '../../db/schema.js';

export type EventRow = EventsTable;

export interface EventFilters {
  /** Any of these types. */
  types?: string[] | undefined;
  resourceId?: string | undefined;
  createdAfter?: string | undefined;
}

/** The filters as conditions on the events table (aliased `e` or not). */
function matching(
  eb: ExpressionBuilder<Database, 'events'>,
  platformId: string,
  filters: EventFilters,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [eb('events.platform_id', '=', platformId)];
  if (filters.types !== undefined) conditions.push(eb('events.type', 'in', filters.types));
  if (filters.resourceId !== undefined) conditions.push(eb('events.resource_id', '=', filters.resourceId));
  if (filters.createdAfter !== undefined)
    conditions.push(eb('events.created_at', '>=', storedTime(filters.createdAfter, 'from')));
  return eb.and(conditions);
}

/** One page of the platform's events, newest first (the events_platform_created index orders them). */
export async function listEvents(
  q: Queryable,
  platformId: string,
  filters: EventFilters,
  page: PageRequest,
): Promise<PageResult<EventRow>> {
  const query = q
    .selectFrom('events')
    .selectAll()
    .where((eb) => matching(eb, platformId, filters));
  return paginate<EventRow>(query as never, 'events', page);
}

// ----------------------------------------------------------------------------- the log's order

/**
 * Where an event stands in the order events were recorded (committed). On the embedded store,
 * its row number: one connection writes every row, one transaction after another, and a new
 * row's number is above every other's. On PostgreSQL, the transaction that recorded it
 * (`events.tx`, migration 0023) and then its id (ids of one transaction follow the order they
 * were made in).
 */
export type LogPosition = { seq: number } | { tx: string; id: string };

export async function logPosition(q: Queryable, platformId: string, eventId: string): Promise<LogPosition | undefined> {
  if (onPostgres(q)) {
    const rows = await sql<{ tx: string; id: string }>`
      SELECT CAST(tx AS TEXT) AS tx, id FROM events WHERE id = ${eventId} AND platform_id = ${platformId}`.execute(q);
    return rows.rows[0];
  }
  const rows = await sql<{ seq: number }>`
    SELECT rowid AS seq FROM events WHERE id = ${eventId} AND platform_id = ${platformId}`.execute(q);
  return rows.rows[0];
}

/**
 * On PostgreSQL, the first transaction id whose events a reader may not see yet: the oldest
 * transaction of this installation still running when the statement began, else the next id
 * to be given out. Every event of a transaction below it has committed (or never will), so
 * the log up to it is final, and what commits later goes after it: a reader that follows the
 * log from a position never misses an event. Transactions the server runs for others (other
 * databases, whose ids are shared, and other schemas of this one, whose connections railyard
 * names otherwise: applicationName in db/index.ts) are left out when they can be told apart,
 * so one that runs long there does not hold this log back; one that cannot be told apart
 * counts, which can only delay. One statement: the snapshot is the statement's own.
 */
const LOG_HORIZON = sql`COALESCE(
  (SELECT x FROM pg_snapshot_xip(pg_current_snapshot()) AS x
    WHERE NOT EXISTS (
      SELECT 1 FROM pg_stat_activity a
      WHERE a.backend_xid IS NOT NULL
        AND (a.datname IS DISTINCT FROM current_database()
          OR a.application_name IS DISTINCT FROM current_setting('application_name'))
        AND CAST(CAST(a.backend_xid AS TEXT) AS BIGINT) = CAST(CAST(x AS TEXT) AS BIGINT) % 4294967296)
    ORDER BY x LIMIT 1),
  pg_snapshot_xmax(pg_current_snapshot()))`;

export interface LogPage {
  /** The events after the position, oldest first, each with its position. */
  rows: (EventRow & { position: LogPosition })[];
  hasMore: boolean;
  totalCount: number;
  /**
   * PostgreSQL: matching events exist that a transaction still running elsewhere may yet
   * precede; they are left for a later read (see LOG_HORIZON).
   */
  held: boolean;
}

/** The platform's events recorded after `after`, oldest first: up to `limit`. */
export async function eventsAfter(
  q: Queryable,
  platformId: string,
  filters: EventFilters,
  after: LogPosition,
  limit: number,
): Promise<LogPage> {
  return 'tx' in after
    ? eventsAfterOnPostgres(q, platformId, filters, after, limit)
    : eventsAfterEmbedded(q, platformId, filters, after, limit);
}

async function eventsAfterEmbedded(
  q: Queryable,
  platformId: string,
  filters: EventFilters,
  after: { seq: number },
  limit: number,
): Promise<LogPage> {
  const later = q
    .selectFrom('events')
    .where((eb) => eb.and([matching(eb, platformId, filters), sql<SqlBool>`rowid > ${after.seq}`]));
  const [rows, count] = await Promise.all([
    later
      .selectAll()
      .select(sql<number>`rowid`.as('seq'))
      .orderBy(sql`rowid`)
      .limit(limit + 1)
      .execute(),
    later.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  const hasMore = rows.length > limit;
  return {
    rows: rows.slice(0, limit).map(({ seq, ...row }) => ({ ...row, position: { seq } })),
    hasMore,
    totalCount: Number(count.n),
    held: false,
  };
}

async function eventsAfterOnPostgres(
  q: Queryable,
  platformId: string,
  filters: EventFilters,
  after: { tx: string; id: string },
  limit: number,
): Promise<LogPage> {
  const later = q
    .selectFrom('events')
    .where((eb) =>
      eb.and([
        matching(eb, platformId, filters),
        sql<SqlBool>`(events.tx, events.id) > (CAST(${after.tx} AS xid8), ${after.id})`,
      ]),
    );
  // Events past the horizon come after the final ones (they are ordered by transaction): the
  // page is the final ones at its head, and one past it says the rest must wait.
  const [rows, count] = await Promise.all([
    later
      .selectAll()
      .select([sql<string>`CAST(events.tx AS TEXT)`.as('tx'), sql<boolean>`events.tx < ${LOG_HORIZON}`.as('final')])
      .orderBy(sql`events.tx`)
      .orderBy('events.id')
      .limit(limit + 1)
      .execute(),
    later
      .where(sql<SqlBool>`events.tx < ${LOG_HORIZON}`)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  const final = rows.filter((row) => row.final);
  const held = final.length < rows.length;
  return {
    rows: final.slice(0, limit).map(({ tx, final: _, ...row }) => ({ ...row, position: { tx, id: row.id } })),
    hasMore: final.length > limit,
    totalCount: Number(count.n),
    held,
  };
}

/** Every event about one object, oldest first. */
export async function eventsOfResource(q: Queryable, platformId: string, resourceId: string): Promise<EventRow[]> {
  return q
    .selectFrom('events')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('resource_id', '=', resourceId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}
