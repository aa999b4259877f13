// Which tables hold a platform's rows: the one list that a reset (reset.ts) and a snapshot
// (snapshots/) work from, read from the store's own catalogue once per store. A table with a
// platform_id column belongs to a platform; a table without one that references such a table
// (customer_import_errors) goes with its parent. So a table added by a later migration is
// covered without anyone having to remember these files; what each of them leaves out is
// named there (reset.ts KEPT_TABLES, snapshots/tables.ts), and test/sandbox/snapshot-tables.test.ts
// fails on a table nobody has placed.

import { sql, type Db, type Queryable } from '../db/index.js';

export interface Catalogue {
  /** Every column of every table, in each table's column order. */
  columns: { table_name: string; column_name: string }[];
  /** Foreign keys, by their first column. */
  keys: { child: string; parent: string; from_col: string; to_col: string }[];
}

export interface OwnedTable {
  table: string;
  /** Its columns, in the table's order. */
  columns: string[];
  /** Set for a table without platform_id: its rows are those whose `column` names a row of `parent` that is the platform's. */
  via?: { column: string; parent: string; parentColumn: string };
}

export interface PlatformTables {
  /** Every table a platform owns, children before parents (the order to delete in). */
  owned: OwnedTable[];
  /** The other tables (the platforms themselves, and what belongs to no platform), with their columns. */
  others: Map<string, string[]>;
}

export async function readCatalogue(q: Queryable, dialect: Db['dialect']): Promise<Catalogue> {
  if (dialect === 'sqlite') {
    const columns = await sql<Catalogue['columns'][number]>`
      SELECT m.name AS table_name, p.name AS column_name
      FROM sqlite_master m JOIN pragma_table_info(m.name) p
      WHERE m.type = 'table' ORDER BY m.name, p.cid`.execute(q);
    const keys = await sql<Catalogue['keys'][number]>`
      SELECT m.name AS child, f."table" AS parent, f."from" AS from_col, f."to" AS to_col
      FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
      WHERE m.type = 'table'`.execute(q);
    return { columns: columns.rows, keys: keys.rows };
  }
  const columns = await sql<Catalogue['columns'][number]>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`.execute(q);
  const keys = await sql<Catalogue['keys'][number]>`
    SELECT cl.relname AS child, pcl.relname AS parent, a.attname AS from_col, af.attname AS to_col
    FROM pg_constraint c
    JOIN pg_class cl ON cl.oid = c.conrelid
    JOIN pg_class pcl ON pcl.oid = c.confrelid
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    JOIN pg_attribute af ON af.attrelid = c.confrelid AND af.attnum = c.confkey[1]
    WHERE c.contype = 'f' AND c.connamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`.execute(
    q,
  );
  return { columns: columns.rows, keys: keys.rows };
}

/** The tables of the catalogue, split into those a platform owns (children first) and the others. */
export function platformTablesOf(catalogue: Catalogue): PlatformTables {
  const tables = new Map<string, string[]>();
  for (const { table_name, column_name } of catalogue.columns) {
    if (table_name.startsWith('kysely_') || table_name.startsWith('sqlite_')) continue;
    const columns = tables.get(table_name) ?? [];
    columns.push(column_name);
    tables.set(table_name, columns);
  }
  const owned = new Map<string, OwnedTable>();
  for (const [table, columns] of tables)
    if (columns.includes('platform_id') && table !== 'platforms') owned.set(table, { table, columns });
  for (const [table, columns] of tables) {
    if (owned.has(table) || table === 'platforms') continue;
    const key = catalogue.keys.find(
      (k) => k.child === table && owned.has(k.parent) && owned.get(k.parent)!.via === undefined,
    );
    if (key !== undefined)
      owned.set(table, { table, columns, via: { column: key.from_col, parent: key.parent, parentColumn: key.to_col } });
  }
  // Children first: a table comes once every table that references it has come.
  const order: OwnedTable[] = [];
  const left = new Set(owned.keys());
  while (left.size > 0) {
    const ready = [...left]
      .filter((table) => !catalogue.keys.some((k) => k.parent === table && k.child !== table && left.has(k.child)))
      .sort();
    if (ready.length === 0) throw new Error(`foreign keys form a cycle among ${[...left].join(', ')}`);
    for (const table of ready) {
      order.push(owned.get(table)!);
      left.delete(table);
    }
  }
  const others = new Map([...tables].filter(([table]) => !owned.has(table)));
  return { owned: order, others };
}

// The schema changes only through migrations at start-up, so the tables are read once per store.
const TABLES = new WeakMap<Db, Promise<PlatformTables>>();

/** The platform tables of `db`'s schema (read once per store). */
export function platformTables(db: Db): Promise<PlatformTables> {
  let tables = TABLES.get(db);
  if (tables === undefined) {
    tables = readCatalogue(db.k, db.dialect).then(platformTablesOf);
    tables.catch(() => TABLES.delete(db));
    TABLES.set(db, tables);
  }
  return tables;
}

/** The condition that picks the platform's rows of `table`. */
export function ownedBy(table: OwnedTable, platformId: string) {
  const via = table.via;
  return via === undefined
    ? sql`platform_id = ${platformId}`
    : sql`${sql.ref(via.column)} IN (SELECT ${sql.ref(via.parentColumn)} FROM ${sql.table(via.parent)} WHERE platform_id = ${platformId})`;
}
