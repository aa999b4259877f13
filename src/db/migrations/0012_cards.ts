import type { Kysely } from 'kysely';

// Cards issued to customers and funded from their internal accounts, the short-lived
// tokens of card-detail reveals, and railyard's own keys (the card-data key).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('railyard_keys')
    .addColumn('name', 'text', (c) => c.primaryKey())
    // base64 of the key bytes.
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('cards')
    // `Card:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('cardholder_id', 'text', (c) => c.notNull())
    .addColumn('platform_card_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('state_reason', 'text')
    .addColumn('brand', 'text', (c) => c.notNull())
    .addColumn('form', 'text', (c) => c.notNull())
    .addColumn('last4', 'text', (c) => c.notNull())
    .addColumn('exp_month', 'integer', (c) => c.notNull())
    .addColumn('exp_year', 'integer', (c) => c.notNull())
    // JSON array of internal account ids, in priority order.
    .addColumn('funding_sources', 'text', (c) => c.notNull())
    .addColumn('max_spend_per_transaction', 'bigint')
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('processor_ref', 'text', (c) => c.notNull())
    .addColumn('issuer_ref', 'text', (c) => c.notNull())
    // AES-256-GCM (the card-data key) of the full number and the CVC: iv.tag.ciphertext, base64.
    .addColumn('sealed_details', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cards_platform').on('cards').columns(['platform_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('cards_platform_card_id')
    .on('cards')
    .columns(['platform_id', 'platform_card_id'])
    .unique()
    .execute();

  // A delegated key's private half, custodied by railyard: sealed (src/crypto/sealing.ts), never shown.
  await db.schema.alterTable('delegated_keys').addColumn('private_key', 'text').execute();

  await db.schema
    .createTable('card_reveals')
    // sha256 hex of the reveal token (the token travels only in the URL fragment).
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
