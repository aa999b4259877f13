import type { Kysely } from 'kysely';

// Fault rules a platform sets on itself (src/faults/): rules on its Grid API requests and rules
// on its webhook deliveries, with how often each fired. Each platform row carries a tag per
// kind of rule, null while it has no rule that can fire, so that a request or an event of a
// platform without rules costs nothing more than the read of its row it makes anyway. A
// delivery and a try record what a webhook rule did to them.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fault_rules')
    // `FaultRule:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    // JSON: the rule as the platform gave it (matchers, effect), with the seed drawn for it.
    .addColumn('rule', 'text', (c) => c.notNull())
    // How many times it may fire (null: no limit).
    .addColumn('times', 'integer')
    // Requests that matched it, and those it fired on.
    .addColumn('matched', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('fired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('fault_rules_platform').on('fault_rules').columns(['platform_id', 'id']).execute();

  await db.schema
    .createTable('webhook_fault_rules')
    // `WebhookFaultRule:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    // JSON: the rule as the platform gave it (event type, effect, delay).
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('times', 'integer')
    .addColumn('fired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_fault_rules_platform')
    .on('webhook_fault_rules')
    .columns(['platform_id', 'id'])
    .execute();

  // A new tag each time the platform's rules change; null while none of them can fire.
  await db.schema.alterTable('platforms').addColumn('fault_rules', 'text').execute();
  await db.schema.alterTable('platforms').addColumn('webhook_fault_rules', 'text').execute();
  // JSON: what a webhook fault rule did to the delivery (see src/events/faults.ts).
  await db.schema.alterTable('webhook_deliveries').addColumn('fault', 'text').execute();
  // `drop` or `duplicate`: a try a rule left unsent, or the second copy a rule sent.
  await db.schema.alterTable('webhook_attempts').addColumn('fault', 'text').execute();
}
