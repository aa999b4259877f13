import { PostgresAdapter, sql, type Kysely } from 'kysely';

// The request journal on PostgreSQL is an unlogged table: its rows (two bodies each, the
// largest rows railyard writes) and the prunes of its window go to no write-ahead log, so
// they add nothing to what each commit waits to flush, and cost the server's processes, which
// share the machine with the requests, only the table's own pages. The journal is a record
// of a test's traffic, not money: after a crash of the PostgreSQL server (not a clean stop)
// the table comes back empty, where the money tables keep every committed row. The embedded
// store's journal makes the same trade in its file of its own (journal-worker.js,
// synchronous = OFF).

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`ALTER TABLE request_journal SET UNLOGGED`.execute(db);
}
