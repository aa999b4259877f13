import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresAdapter,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';
import * as m0001 from './migrations/0001_foundation.js';
import * as m0002 from './migrations/0002_kernel.js';
import * as m0003 from './migrations/0003_customers.js';
import * as m0004 from './migrations/0004_money.js';
import * as m0005 from './migrations/0005_webhooks.js';
import * as m0006 from './migrations/0006_receivers.js';
import * as m0007 from './migrations/0007_quotes.js';
import * as m0008 from './migrations/0008_perf_indexes.js';
import * as m0009 from './migrations/0009_wallet_auth.js';
import * as m0010 from './migrations/0010_agents.js';
import * as m0011 from './migrations/0011_sca.js';
import * as m0012 from './migrations/0012_cards.js';
import * as m0013 from './migrations/0013_invitations.js';
import * as m0014 from './migrations/0014_card_simulations.js';
import * as m0015 from './migrations/0015_stablecoins.js';
import * as m0016 from './migrations/0016_list_counts.js';
import * as m0017 from './migrations/0017_counts_at_commit.js';
import * as m0019 from './migrations/0019_ledger_history_indexes.js';
import * as m0020 from './migrations/0020_request_journal.js';
import * as m0021 from './migrations/0021_faults.js';
import * as m0022 from './migrations/0022_snapshots.js';
import * as m0023 from './migrations/0023_event_order.js';
import * as m0024 from './migrations/0024_journal_unlogged.js';

// Migrations are code (bundled with the server), applied in name order on every start, on
// either store. Kysely's migrator takes a lock, so instances starting together apply each
// migration once. Append new files; never edit one that has shipped.
const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_kernel': m0002,
  '0003_customers': m0003,
  '0004_money': m0004,
  '0005_webhooks': m0005,
  '0006_receivers': m0006,
  '0007_quotes': m0007,
  '0008_perf_indexes': m0008,
  '0009_wallet_auth': m0009,
  '0010_agents': m0010,
  '0011_sca': m0011,
  '0012_cards': m0012,
  '0013_invitations': m0013,
  '0014_card_simulations': m0014,
  '0015_stablecoins': m0015,
  '0016_list_counts': m0016,
  '0017_counts_at_commit': m0017,
  '0019_ledger_history_indexes': m0019,
  '0020_request_journal': m0020,
  '0021_faults': m0021,
  '0022_snapshots': m0022,
  '0023_event_order': m0023,
  '0024_journal_unlogged': m0024,
};

/**
 * The last migration: the version of the schema a store has once it is up to date (a
 * snapshot records the version it was saved under, see src/sandbox/snapshots/).
 */
export const SCHEMA_VERSION: string = Object.keys(MIGRATIONS).sort().at(-1)!;

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/**
 * What the migrator asks of the database, answered for railyard's schema only. Kysely's own
 * PostgreSQL introspector lists the tables of every schema, with their columns; a schema that
 * another installation (or another test) drops meanwhile made that listing fail, and the
 * start-up with it. The migrator only asks whether its schema and its two tables exist.
 */
class OwnSchemaIntrospector implements DatabaseIntrospector {
  constructor(
    // biome-ignore lint/suspicious/noExplicitAny: below the typed schema, like the migrations
    private readonly db: Kysely<any>,
    private readonly schema: string | undefined,
  ) {}

  private get schemaName() {
    return this.schema === undefined ? sql`current_schema()` : sql`${this.schema}`;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const rows = await sql<{
      name: string;
    }>`SELECT nspname AS name FROM pg_namespace WHERE nspname = ${this.schemaName}`.execute(this.db);
    return rows.rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const rows = await sql<{ name: string; schema: string }>`
      SELECT c.relname AS name, n.nspname AS schema
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ${this.schemaName} AND c.relkind IN ('r', 'p')`.execute(this.db);
    return rows.rows.map((row) => ({ ...row, isView: false, columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}

/** `db` as the migrator sees it: on PostgreSQL, with the introspector above. */
// biome-ignore lint/suspicious/noExplicitAny: below the typed schema, like the migrations
function forMigrator(db: Kysely<any>, schema: string | undefined): Kysely<any> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return db;
  const introspection = new OwnSchemaIntrospector(db, schema);
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** `schema`: the PostgreSQL schema that holds railyard's tables when it is not the default. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before (and below) the typed schema
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<void> {
  const migrator = new Migrator({
    db: forMigrator(db, schema),
    provider,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
}
