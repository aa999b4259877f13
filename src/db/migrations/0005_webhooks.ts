import type { Kysely } from 'kysely';

// Webhook deliveries with every attempt (the delivery log), and the approval handshake of
// incoming payments.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_deliveries')
    // The event's id (`Webhook:<uuid>`): one delivery per event, the envelope id of every try.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // The job that makes the attempts (absent for a synchronous test send).
    .addColumn('job_id', 'text')
    // Start of the current round of tries (the event, or the last replay): retries stop 7 days later.
    .addColumn('round_started_at', 'text', (c) => c.notNull())
    // What started the current round: EVENT (the event itself) or REPLAY.
    .addColumn('round_trigger', 'text', (c) => c.notNull())
    .addColumn('last_attempt_at', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_platform_created')
    .on('webhook_deliveries')
    .columns(['platform_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_resource')
    .on('webhook_deliveries')
    .columns(['platform_id', 'resource_id'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_excerpt', 'text')
    .addColumn('error', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_attempts_delivery')
    .on('webhook_attempts')
    .columns(['delivery_id', 'number'])
    .unique()
    .execute();

  await db.schema
    .createTable('incoming_payment_approvals')
    .addColumn('transaction_id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    // The INCOMING_PAYMENT.PENDING event of the current round of asking.
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // JSON: the IncomingTransaction as the webhook showed it, plus the fields asked of the receiver.
    .addColumn('transaction', 'text', (c) => c.notNull())
    .addColumn('requested_fields', 'text', (c) => c.notNull())
    .addColumn('decision_deadline', 'text')
    .addColumn('decided_by', 'text')
    // JSON: what came with the decision (receiverCustomerInfo, reason, requiredFields, error).
    .addColumn('decision', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
