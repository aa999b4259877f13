// The SQL of snapshots: the snapshot rows themselves, reading a platform's rows of a table,
// and writing saved rows back by column name.
//
// A snapshot's content is JSON: the platform's row (the columns a restore takes back) and, for
// each table, its column names and its rows as lists of values in that order. Values are
// what the store gives, as JSON: text, numbers, null; 64-bit integers that PostgreSQL returns
// as text stay text (both stores take them back as integers); bytes are {"hex": "…"}.

import { CompiledQuery } from 'kysely';
import { directExecutor, onPostgres, sql, type Queryable, type Tx } from '../../db/index.js';
import type { OwnedTable } from '../platform-tables.js';
import { ownedBy } from '../platform-tables.js';

/** The layout of `content` described above. */
export const FORMAT = 1;

export type Value = string | number | null | { hex: string };

export interface SavedTable {
  columns: string[];
  rows: Value[][];
}

export interface Content {
  format: number;
  /** The platform's row: the columns a restore takes back. */
  platform: Record<string, Value>;
  tables: Record<string, SavedTable>;
}

export interface SnapshotRow {
  platform_id: string;
  name: string;
  schema_version: string;
  format: number;
  clock_ms: string | number;
  row_counts: string;
  size_bytes: number;
  saved_at_ms: string | number;
  created_at: string;
}

const SUMMARY_COLUMNS = [
  'platform_id',
  'name',
  'schema_version',
  'format',
  'clock_ms',
  'row_counts',
  'size_bytes',
  'saved_at_ms',
  'created_at',
] as const;

function toValue(value: unknown): Value {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (Buffer.isBuffer(value)) return { hex: value.toString('hex') };
  throw new Error(`a snapshot cannot hold a value of type ${typeof value}`);
}

/** The platform's rows of `table`, with the columns in the table's order. */
export async function readRows(tx: Tx, table: OwnedTable, platformId: string): Promise<SavedTable> {
  const result = await sql<Record<string, unknown>>`
    SELECT * FROM ${sql.table(table.table)} WHERE ${ownedBy(table, platformId)}`.execute(tx);
  return {
    columns: table.columns,
    rows: result.rows.map((row) => table.columns.map((column) => toValue(row[column]))),
  };
}

/** The platform's row, as a record of values. */
export async function readPlatform(tx: Tx, platformId: string): Promise<Record<string, Value> | undefined> {
  const result = await sql<Record<string, unknown>>`SELECT * FROM platforms WHERE id = ${platformId}`.execute(tx);
  const row = result.rows[0];
  if (row === undefined) return undefined;
  return Object.fromEntries(Object.entries(row).map(([column, value]) => [column, toValue(value)]));
}

/** An identifier of the catalogue, quoted for SQL. */
function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The value as the store takes it: bytes as a Buffer (SQLite) or bytea's hex text (PostgreSQL, through JSON). */
function fromValue(value: Value, postgres: boolean): unknown {
  if (value === null || typeof value !== 'object') return value;
  return postgres ? `\\x${value.hex}` : Buffer.from(value.hex, 'hex');
}

/**
 * Inserts saved rows into `table`, by column name: the columns both the saved rows and the
 * table have (`columns`, in the table's order); a column the table has and the rows lack gets
 * its default. `ignoreExisting`: a row whose key is taken is skipped. Returns the rows written.
 */
export async function writeRows(
  tx: Tx,
  table: string,
  columns: readonly string[],
  saved: SavedTable,
  ignoreExisting: boolean,
): Promise<number> {
  if (saved.rows.length === 0 || columns.length === 0) return 0;
  const at = columns.map((column) => saved.columns.indexOf(column));
  const conflict = ignoreExisting ? ' ON CONFLICT DO NOTHING' : '';
  const names = columns.map(quoted).join(', ');
  if (onPostgres(tx)) {
    // PostgreSQL: the whole table in one statement, its rows one JSON parameter, turned into
    // rows of the table's own type (each value converted to its column's type).
    const records = saved.rows.map((row) =>
      Object.fromEntries(columns.map((column, i) => [column, fromValue(row[at[i]!]!, true)])),
    );
    const text = `INSERT INTO ${quoted(table)} (${names}) SELECT ${names} FROM json_populate_recordset(NULL::${quoted(table)}, $1::json)${conflict}`;
    const result = await tx.executeQuery(CompiledQuery.raw(text, [JSON.stringify(records)]));
    return Number(result.numAffectedRows ?? 0n);
  }
  // The embedded store: one prepared statement per table, run for each row on the spot.
  const text = `INSERT INTO ${quoted(table)} (${names}) VALUES (${columns.map(() => '?').join(', ')})${conflict}`;
  const direct = directExecutor(tx);
  let written = 0;
  for (const row of saved.rows) {
    const values = at.map((i) => fromValue(row[i]!, false));
    const ran = direct?.run(tx, text, values);
    const result =
      (ran instanceof Promise ? await ran : ran) ?? (await tx.executeQuery(CompiledQuery.raw(text, values)));
    written += Number(result.numAffectedRows ?? 0n);
  }
  return written;
}

/** Sets the platform row's `values` (column → value). */
export async function updatePlatform(tx: Tx, platformId: string, values: Record<string, unknown>): Promise<void> {
  const sets = Object.entries(values).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  if (sets.length === 0) return;
  await sql`UPDATE platforms SET ${sql.join(sets)} WHERE id = ${platformId}`.execute(tx);
}

export async function listSnapshots(q: Queryable, platformId: string): Promise<SnapshotRow[]> {
  return q
    .selectFrom('snapshots')
    .select(SUMMARY_COLUMNS)
    .where('platform_id', '=', platformId)
    .orderBy('saved_at_ms', 'desc')
    .orderBy('name')
    .execute();
}

export async function countSnapshots(q: Queryable, platformId: string): Promise<number> {
  const row = await q
    .selectFrom('snapshots')
    .select(sql<string>`CAST(COUNT(*) AS TEXT)`.as('n'))
    .where('platform_id', '=', platformId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findSnapshot(q: Queryable, platformId: string, name: string): Promise<SnapshotRow | undefined> {
  return q
    .selectFrom('snapshots')
    .select(SUMMARY_COLUMNS)
    .where('platform_id', '=', platformId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function snapshotContent(
  q: Queryable,
  platformId: string,
  name: string,
): Promise<(SnapshotRow & { content: string }) | undefined> {
  return q
    .selectFrom('snapshots')
    .select([...SUMMARY_COLUMNS, 'content'])
    .where('platform_id', '=', platformId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function putSnapshot(
  q: Queryable,
  row: SnapshotRow & { content: string },
  replace: boolean,
): Promise<void> {
  if (replace)
    await q.deleteFrom('snapshots').where('platform_id', '=', row.platform_id).where('name', '=', row.name).execute();
  await q.insertInto('snapshots').values(row).execute();
}

export async function deleteSnapshot(q: Queryable, platformId: string, name: string): Promise<boolean> {
  const result = await q
    .deleteFrom('snapshots')
    .where('platform_id', '=', platformId)
    .where('name', '=', name)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
