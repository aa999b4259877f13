import type { Kysely } from 'kysely';

// The card network's events a platform simulated (POST /sandbox/cards/{id}/simulate/...):
// each is accepted with an issuer transaction token and carried out later by a job; the row
// records what it asked for and what came of it (the card transaction it made or changed,
// or why it was declined or could not apply).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('card_simulations')
    .addColumn('token', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('card_id', 'text', (c) => c.notNull())
    // The simulator: AUTHORIZATION, CLEARING, RETURN, ... (see cards/simulations.ts).
    .addColumn('kind', 'text', (c) => c.notNull())
    // JSON of the request body.
    .addColumn('request', 'text', (c) => c.notNull())
    // PENDING, then APPLIED, DECLINED or NOT_APPLIED.
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('card_transaction_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
