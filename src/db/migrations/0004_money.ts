import { SqliteAdapter, sql, type Kysely } from 'kysely';

// Money movement: internal accounts, the double-entry ledger (accounts with running
// balances, postings and their entries) and transactions.
//
// note: every transfer writes to the ledger and transaction tables, and on the embedded
// store each index costs a page write per commit. So these tables carry only the indexes
// the hot paths need: a list filtered by account or reference walks the platform's
// transactions in date order, and the ledger audit scans the platform's entries once. On
// SQLite the text-keyed tables are WITHOUT ROWID (the primary key is the table: one b-tree
// instead of two).

export async function up(db: Kysely<unknown>): Promise<void> {
  const withoutRowid = db.getExecutor().adapter instanceof SqliteAdapter ? sql`WITHOUT ROWID` : sql``;

  await db.schema
    .createTable('internal_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text')
    .addColumn('owner_key', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // One account per owner, type and currency; concurrent provisioning loses on this index.
  await db.schema
    .createIndex('internal_accounts_owner_type_currency')
    .on('internal_accounts')
    .columns(['platform_id', 'owner_key', 'type', 'currency'])
    .unique()
    .execute();
  await db.schema
    .createIndex('internal_accounts_owner_created')
    .on('internal_accounts')
    .columns(['platform_id', 'owner_key', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('ledger_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('available', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('held', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('ledger_postings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('transaction_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .modifyEnd(withoutRowid)
    .execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('posting_id', 'text', (c) => c.notNull().references('ledger_postings.id'))
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('ledger_entries_pk', ['posting_id', 'line'])
    .modifyEnd(withoutRowid)
    .execute();

  await db.schema
    .createTable('transactions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text')
    .addColumn('platform_customer_id', 'text')
    .addColumn('internal_account_id', 'text', (c) => c.notNull())
    .addColumn('external_account_id', 'text', (c) => c.notNull())
    .addColumn('source_account_id', 'text', (c) => c.notNull())
    .addColumn('destination_account_id', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('payment_rail', 'text')
    .addColumn('rail_selection_mode', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('refund', 'text')
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('settled_at', 'text')
    .addColumn('receipt_delivery_confirmed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .modifyEnd(withoutRowid)
    .execute();
  await db.schema
    .createIndex('transactions_platform_created')
    .on('transactions')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('transactions_customer_created')
    .on('transactions')
    .columns(['platform_id', 'customer_id', 'created_at', 'id'])
    .execute();
}
