// Which tables a snapshot holds is read from the store's catalogue (src/sandbox/platform-tables.ts):
// a table a migration adds is in every snapshot from then on, unless someone says otherwise.
// This test makes that a decision: it fails when the store has a table that is neither in the
// list below (held by a snapshot) nor left out by name with its reason (NOT_SNAPSHOTTED:
// credentials, test instrumentation such as request journals and fault rules, the snapshots
// themselves; DERIVED: rebuilt by triggers), nor a table of no platform (SHARED_TABLES).

import { describe, expect, it } from 'vitest';
import { type Catalogue, platformTables, platformTablesOf, readCatalogue } from '../../src/sandbox/platform-tables.js';
import { KEPT_TABLES } from '../../src/sandbox/reset.js';
import { DERIVED, NOT_SNAPSHOTTED, SHARED_TABLES, snapshotTables } from '../../src/sandbox/snapshots/service.js';
import { build } from '../helper.js';

/** The tables a snapshot holds. A table added here is one whose rows a restore must bring back. */
const SNAPSHOTTED = [
  'agent_actions',
  'agent_device_codes',
  'agents',
  'beneficial_owners',
  'card_reveals',
  'card_simulations',
  'cards',
  'customer_import_errors',
  'customer_import_jobs',
  'customers',
  'delegated_keys',
  'documents',
  'events',
  'external_accounts',
  'idempotency_keys',
  'incoming_payment_approvals',
  'internal_accounts',
  'invitations',
  'jobs',
  'kyc_links',
  'ledger_accounts',
  'ledger_entries',
  'ledger_postings',
  'ownership_challenges',
  'quotes',
  'receiver_lookups',
  'sca_challenges',
  'sca_factors',
  'sca_login_states',
  'sca_resets',
  'sca_sessions',
  'sca_trusted_beneficiaries',
  'stablecoin_operations',
  'stablecoin_provider_accounts',
  'stablecoins',
  'transactions',
  'verifications',
  'wallet_credentials',
  'wallet_requests',
  'wallet_sessions',
  'webhook_attempts',
  'webhook_deliveries',
];

describe('the tables of a snapshot', () => {
  it('are every table of the store but those left out by name, each placed once', async () => {
    const t = await build();
    const tables = snapshotTables(await platformTables(t.deps.db));
    expect(tables.unplaced, 'tables nobody has placed: snapshot them or name them with a reason').toEqual([]);
    expect(tables.saved.map((table) => table.table).sort()).toEqual(SNAPSHOTTED);
    const left = [...Object.keys(NOT_SNAPSHOTTED), ...Object.keys(DERIVED), ...Object.keys(SHARED_TABLES)];
    expect(new Set(left).size).toBe(left.length);
    for (const table of left) expect(SNAPSHOTTED, table).not.toContain(table);
    // Every table named as left out exists: a name that no longer matches anything hides nothing.
    const catalogue = await readCatalogue(t.deps.db.k, t.deps.db.dialect);
    const existing = new Set(catalogue.columns.map((c) => c.table_name));
    for (const table of left) expect(existing.has(table), table).toBe(true);
    // What a snapshot leaves as it is, a reset keeps too (credentials, the snapshots), but the
    // test's instruments, which a reset wipes (the platform starts over without rules).
    const instruments = ['fault_rules', 'webhook_fault_rules', 'request_journal'];
    for (const table of Object.keys(NOT_SNAPSHOTTED))
      expect(KEPT_TABLES.has(table), table).toBe(!instruments.includes(table));
  });

  it('take in a table a migration adds, so the list above fails until someone decides', () => {
    const catalogue: Catalogue = {
      columns: [
        { table_name: 'platforms', column_name: 'id' },
        { table_name: 'customers', column_name: 'id' },
        { table_name: 'customers', column_name: 'platform_id' },
        { table_name: 'api_tokens', column_name: 'platform_id' },
        { table_name: 'list_counts', column_name: 'platform_id' },
        { table_name: 'railyard_keys', column_name: 'name' },
        // A new table of the platform's, one owned through it, and one of no platform.
        { table_name: 'customer_flags', column_name: 'platform_id' },
        { table_name: 'customer_notes', column_name: 'customer_id' },
        { table_name: 'server_settings', column_name: 'name' },
      ],
      keys: [{ child: 'customer_notes', parent: 'customers', from_col: 'customer_id', to_col: 'id' }],
    };
    const tables = snapshotTables(platformTablesOf(catalogue));
    // Children before parents: the order of deletion (a restore writes in the reverse order).
    expect(tables.saved.map((table) => table.table)).toEqual(['customer_flags', 'customer_notes', 'customers']);
    expect(tables.saved.find((table) => table.table === 'customer_notes')!.via).toEqual({
      column: 'customer_id',
      parent: 'customers',
      parentColumn: 'id',
    });
    expect(tables.replaced.map((table) => table.table)).toEqual([
      'customer_flags',
      'customer_notes',
      'list_counts',
      'customers',
    ]);
    expect(tables.unplaced).toEqual(['server_settings']);
  });
});
