import type { Kysely } from 'kysely';

// Cross-currency quotes. A quote is the locked offer (rate, fees, amounts, expiry); its
// transaction exists from creation and carries the status the two share. Transactions gain
// a `conversion` column: null for same-currency transfers and incoming payments, else JSON
// with the receiving side and how the payment is funded (see modules/transactions).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('quotes')
    // `Quote:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text')
    .addColumn('transaction_id', 'text', (c) => c.notNull())
    .addColumn('lookup_id', 'text')
    /** JSON: source and destination as the quote presents them. */
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('locked_side', 'text', (c) => c.notNull())
    .addColumn('locked_amount', 'bigint', (c) => c.notNull())
    .addColumn('sending_currency', 'text', (c) => c.notNull())
    .addColumn('receiving_currency', 'text', (c) => c.notNull())
    .addColumn('sending_amount', 'bigint', (c) => c.notNull())
    .addColumn('receiving_amount', 'bigint', (c) => c.notNull())
    .addColumn('exchange_rate', 'text', (c) => c.notNull())
    .addColumn('fees', 'bigint', (c) => c.notNull())
    .addColumn('platform_fees', 'bigint', (c) => c.notNull())
    .addColumn('rate_details', 'text', (c) => c.notNull())
    /** JSON: the instructions of a real-time-funded quote, once they may be shown. */
    .addColumn('payment_instructions', 'text')
    /** JSON: the SCA challenge while one is open. */
    .addColumn('sca_challenge', 'text')
    /** JSON: the senderCustomerInfo the receiver asked for. */
    .addColumn('sender_customer_info', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('transactions').addColumn('conversion', 'text').execute();
}
