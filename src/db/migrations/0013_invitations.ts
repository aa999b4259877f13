import type { Kysely } from 'kysely';

// UMA invitations: a customer's link that someone else claims with their UMA address.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitations')
    // The short code (unique across platforms: another platform's customer claims it by code).
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('inviter_uma', 'text', (c) => c.notNull())
    .addColumn('invitee_uma', 'text')
    .addColumn('first_name', 'text')
    .addColumn('amount_to_send', 'bigint')
    .addColumn('currency', 'text')
    // PENDING, CLAIMED or CANCELLED (EXPIRED is read from expires_at).
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('claimed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
