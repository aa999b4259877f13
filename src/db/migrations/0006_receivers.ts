import type { Kysely } from 'kysely';

// Receiver lookups: what a UMA address or external account accepts (currencies, limits,
// payer data it asks for) at the time of the lookup. A quote cites a lookup by its id.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('receiver_lookups')
    // `Lookup:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('uma_address', 'text')
    .addColumn('external_account_id', 'text')
    .addColumn('sender_customer_id', 'text')
    .addColumn('sender_uma_address', 'text')
    .addColumn('currencies', 'text', (c) => c.notNull())
    .addColumn('required_payer_data_fields', 'text', (c) => c.notNull())
    .addColumn('scenario', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
