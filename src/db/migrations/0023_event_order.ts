import { PostgresAdapter, sql, type Kysely } from 'kysely';

// The order events were recorded in, for readers that follow the log (GET /_railyard/events
// with `after`; src/modules/inspect/store.ts).
//
// On PostgreSQL transactions run side by side, so neither an event's time nor its id tells
// whether an event that commits later may still come before it. Each event now keeps the id
// of the transaction that recorded it (`tx`, PostgreSQL's 64-bit transaction id, given out in
// order), and a reader reads the log only up to the oldest transaction still running: all that
// commits later then comes after what it has read. The index serves those reads per platform.
//
// The embedded store needs nothing: one connection writes every row, one transaction after
// another, and SQLite numbers each new row above every other one (rowid).

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id()`.execute(db);
  await sql`CREATE INDEX events_platform_tx ON events (platform_id, tx, id)`.execute(db);
}
