import type { Kysely } from 'kysely';

// The last move of each platform's sandbox clock, as the stretch of its time that the move
// jumped over. A state change due inside that stretch is stamped at the moment it was due
// (the clock passed it without stopping); any other one at the moment it runs (see
// JobRunner.runOne). Null until the clock first moves.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('platforms').addColumn('clock_advanced_from_ms', 'bigint').execute();
  await db.schema.alterTable('platforms').addColumn('clock_advanced_to_ms', 'bigint').execute();
}

