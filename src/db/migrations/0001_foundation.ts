import { sql, type Kysely } from 'kysely';

// Platforms, API tokens, external accounts with their ownership challenges, and the event outbox.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('platforms')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('clock_offset_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('webhook_private_key', 'text', (c) => c.notNull())
    .addColumn('webhook_public_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('secret_salt', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema
    .createIndex('api_tokens_platform_created')
    .on('api_tokens')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('external_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text')
    .addColumn('owner_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('account_type', 'text', (c) => c.notNull())
    .addColumn('account_info', 'text', (c) => c.notNull())
    .addColumn('identity_key', 'text', (c) => c.notNull())
    .addColumn('platform_account_id', 'text')
    .addColumn('ownership_type', 'text')
    .addColumn('default_uma_deposit', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('beneficiary_verification_status', 'text')
    .addColumn('beneficiary_verified_name', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  // One live registration of an account per owner; a concurrent duplicate loses on this index.
  await db.schema
    .createIndex('external_accounts_identity')
    .on('external_accounts')
    .columns(['platform_id', 'owner_key', 'identity_key'])
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('external_accounts_owner_created')
    .on('external_accounts')
    .columns(['platform_id', 'owner_key', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('ownership_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('external_account_id', 'text', (c) => c.notNull().references('external_accounts.id'))
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('message_to_sign', 'text')
    .addColumn('token', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ownership_challenges_account')
    .on('ownership_challenges')
    .columns(['external_account_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('events_platform_created')
    .on('events')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();
}
