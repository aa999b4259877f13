import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
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
};

const migrationAttemptsMax = 5;

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** `schema`: the PostgreSQL schema that holds railyard's tables when it is not the default. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before (and below) the typed schema
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<void> {
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  let { error, results } = await migrator.migrateToLatest();
  // note: on PostgreSQL the migrator lists the tables of every schema; a schema dropped at
  // that moment (another installation, or another test, on the same database) makes that
  // listing fail with undefined_table. Nothing was applied then, so try again.
  for (
    let attempt = 1;
    error && (error as { code?: string }).code === '42P01' && attempt < migrationAttemptsMax;
    attempt++
  ) {
    ({ error, results } = await migrator.migrateToLatest());
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
}
