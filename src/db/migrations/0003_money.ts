import type { Kysely } from 'kysely';

// Money movement: internal accounts, the double-entry ledger (accounts with running
// balances, postings and their entries) and transactions.

export async function up(db: Kysely<unknown>): Promise<void> {
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
    .execute();
  await db.schema.createIndex('ledger_postings_transaction').on('ledger_postings').columns(['transaction_id']).execute();

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
    .execute();
  await db.schema.createIndex('ledger_entries_account').on('ledger_entries').columns(['account_id', 'bucket']).execute();
  await db.schema.createIndex('ledger_entries_platform_currency').on('ledger_entries').columns(['platform_id', 'currency']).execute();

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
    .execute();
  await db.schema.createIndex('transactions_platform_created').on('transactions').columns(['platform_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('transactions_customer_created')
    .on('transactions')
    .columns(['platform_id', 'customer_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('transactions_source').on('transactions').columns(['platform_id', 'source_account_id']).execute();
  await db.schema.createIndex('transactions_destination').on('transactions').columns(['platform_id', 'destination_account_id']).execute();
  await db.schema.createIndex('transactions_reference').on('transactions').columns(['platform_id', 'reference']).execute();
}
