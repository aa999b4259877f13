import type { Kysely } from 'kysely';

// Snapshots of a platform's state (POST /_railyard/snapshots, src/sandbox/snapshots/). A
// snapshot is one row: its rows of every snapshotted table as JSON, with their column names,
// and the migration the store had reached when it was saved, so that a later version can
// restore it by column name (docs/snapshots.md, "Across restarts and versions").

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('snapshots')
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    // The last migration applied when it was saved (src/db/migrations.ts, SCHEMA_VERSION).
    .addColumn('schema_version', 'text', (c) => c.notNull())
    // The layout of `content` (src/sandbox/snapshots/store.ts, FORMAT).
    .addColumn('format', 'integer', (c) => c.notNull())
    // The platform's sandbox time when it was saved (epoch ms): the time a restore brings back.
    .addColumn('clock_ms', 'bigint', (c) => c.notNull())
    // JSON: rows by table.
    .addColumn('row_counts', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    // Wall-clock ms of the save: the list's order (sandbox time moves back on a restore).
    .addColumn('saved_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('snapshots_pk', ['platform_id', 'name'])
    .execute();
}
