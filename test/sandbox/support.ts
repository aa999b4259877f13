// What the sandbox tests read straight from the store: its tables, and every row a platform
// owns, to compare a platform's whole state before and after a reset or a restore.

import { sql } from '../../src/db/index.js';
import type { TestApp } from '../helper.js';

export interface Table {
  name: string;
  columns: string[];
}

/** The store's tables (of this app's schema on PostgreSQL), as the store itself lists them. */
export async function tables(t: TestApp): Promise<Table[]> {
  if (t.deps.db.dialect === 'postgres') {
    // This schema's only: a catalog-wide listing races with other tests dropping theirs.
    const rows = (
      await sql<{ table_name: string; column_name: string }>`
        SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`.execute(t.deps.db.k)
    ).rows;
    const byTable = new Map<string, string[]>();
    for (const row of rows) {
      if (row.table_name.startsWith('kysely_')) continue;
      byTable.set(row.table_name, [...(byTable.get(row.table_name) ?? []), row.column_name]);
    }
    return [...byTable].map(([name, columns]) => ({ name, columns }));
  }
  return (await t.deps.db.k.introspection.getTables())
    .filter((table) => !table.name.startsWith('kysely_'))
    .map((table) => ({ name: table.name, columns: table.columns.map((c) => c.name) }));
}

/** Every row of the platform, table by table, as text (sorted, so order does not matter). */
export async function rowsOf(t: TestApp, platformId: string): Promise<Record<string, string[]>> {
  // The request journal writes its entries in batches after the answers: the requests
  // answered so far are in the store first, so two readings differ only by what changed.
  await t.deps.journal?.flush();
  const out: Record<string, string[]> = {};
  for (const table of await tables(t)) {
    if (!table.columns.includes('platform_id')) continue;
    const rows = await sql<
      Record<string, unknown>
    >`SELECT * FROM ${sql.table(table.name)} WHERE platform_id = ${platformId}`.execute(t.deps.db.k);
    out[table.name] = rows.rows
      .map((row) =>
        JSON.stringify(row, (_k, v) =>
          typeof v === 'bigint' ? String(v) : Buffer.isBuffer(v) ? v.toString('hex') : v,
        ),
      )
      .sort();
  }
  return out;
}
