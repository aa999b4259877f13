import { type Kysely, sql } from 'kysely';

// Stablecoin issuance: a platform's links to its issuing provider account (credentials
// sealed), the stablecoins it registered there, and the mints and burns of each.

// A REJECTED or FAILED registration holds no token: the same token may be registered again,
// so the unique indexes of registrations leave such rows out.
const RETRYABLE = ['REJECTED', 'FAILED'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stablecoin_provider_accounts')
    // `StablecoinProviderAccount:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_account_id', 'text', (c) => c.notNull())
    .addColumn('provider_environment', 'text', (c) => c.notNull())
    // ACTIVE, INVALID or REVOKED.
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('api_client_id', 'text', (c) => c.notNull())
    // AES-256-GCM (the stablecoin-provider key) of the client secret; never shown.
    .addColumn('sealed_client_secret', 'text', (c) => c.notNull())
    .addColumn('last_verified_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('stablecoin_provider_accounts_platform')
    .on('stablecoin_provider_accounts')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('stablecoin_provider_accounts_account')
    .on('stablecoin_provider_accounts')
    .columns(['platform_id', 'provider', 'provider_environment', 'provider_account_id'])
    .unique()
    .execute();

  await db.schema
    .createTable('stablecoins')
    // `Stablecoin:<uuid>`; also the ledger currency of its tokens.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('stablecoin_provider_account_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_environment', 'text', (c) => c.notNull())
    .addColumn('provider_token_identifier', 'text', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('network_token_identifier', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('base_currency', 'text', (c) => c.notNull())
    .addColumn('decimals', 'integer', (c) => c.notNull())
    .addColumn('issuance_status', 'text', (c) => c.notNull())
    .addColumn('grid_operations_status', 'text', (c) => c.notNull())
    // Set once grid operations are ENABLED.
    .addColumn('currency', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('stablecoins_platform')
    .on('stablecoins')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('stablecoins_network_token')
    .on('stablecoins')
    .columns(['platform_id', 'network', 'network_token_identifier'])
    .unique()
    .where(sql.ref('issuance_status'), 'not in', RETRYABLE)
    .execute();
  await db.schema
    .createIndex('stablecoins_provider_token')
    .on('stablecoins')
    .columns(['stablecoin_provider_account_id', 'provider_token_identifier'])
    .unique()
    .where(sql.ref('issuance_status'), 'not in', RETRYABLE)
    .execute();

  await db.schema
    .createTable('stablecoin_operations')
    // `StablecoinOperation:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('stablecoin_id', 'text', (c) => c.notNull().references('stablecoins.id'))
    // MINT or BURN.
    .addColumn('operation_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // In the token's smallest unit, as decimal text (a count of units may pass 2^53).
    .addColumn('amount', 'text', (c) => c.notNull())
    // The same amount in cents of the base currency.
    .addColumn('fiat_amount', 'bigint', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_environment', 'text', (c) => c.notNull())
    .addColumn('stablecoin_provider_account_id', 'text', (c) => c.notNull())
    // JSON: StablecoinOperationSource, StablecoinOperationDestination, and the optional parts.
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('funding_instructions', 'text')
    .addColumn('estimated_delivery', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('provider_status', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('description', 'text')
    // The sandbox outcome chosen at creation: COMPLETE or FAIL:<failureReason> (src/rails/magic.ts).
    .addColumn('scenario', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('stablecoin_operations_stablecoin')
    .on('stablecoin_operations')
    .columns(['stablecoin_id', 'created_at', 'id'])
    .execute();
}
