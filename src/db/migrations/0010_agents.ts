import type { Kysely } from 'kysely';

// Agents: a customer's AI assistant with its own bearer token (from a device code) and a
// policy, and the actions it submits (money it moves, some of which wait for approval).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agents')
    // `Agent:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_paused', 'integer', (c) => c.notNull().defaultTo(0))
    // JSON AgentPolicy, as last set.
    .addColumn('policy', 'text', (c) => c.notNull())
    // sha256 hex of the access token (the token itself is shown once and never stored).
    .addColumn('token_hash', 'text')
    .addColumn('connected_at', 'text')
    .addColumn('deleted_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agents_platform').on('agents').columns(['platform_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('agents_token').on('agents').column('token_hash').unique().execute();

  await db.schema
    .createTable('agent_device_codes')
    // The code itself (unique across platforms: redeeming it names no platform).
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('redeemed_at', 'text')
    // Set when a newer code replaces this one unredeemed.
    .addColumn('invalidated_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agent_device_codes_agent').on('agent_device_codes').column('agent_id').execute();

  await db.schema
    .createTable('agent_actions')
    // `AgentAction:<uuid>`.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // The request the action runs when approved (JSON), and what it made.
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('quote_id', 'text')
    .addColumn('transaction_id', 'text')
    // The amount in the policy's limit currency, counted in the agent's usage once approved.
    .addColumn('limit_amount', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rejection_reason', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('agent_actions_agent')
    .on('agent_actions')
    .columns(['platform_id', 'agent_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('agent_actions_platform')
    .on('agent_actions')
    .columns(['platform_id', 'status', 'created_at', 'id'])
    .execute();
}
