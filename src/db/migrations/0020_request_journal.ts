import type { Kysely, SchemaModule } from 'kysely';

// The request journal (src/modules/requests/): every request a platform's app made under the
// Grid base path, as railyard answered it, kept for a window of each platform's latest ones.
// Written in batches after the answers (never inside a request's transaction) and pruned per
// platform. No foreign key to platforms: a batch holds rows of several platforms, and one
// refused row would lose the whole batch.

/**
 * The table and its index, as builders: this migration runs them, and the journal's file of
 * its own on an embedded store on disk (src/modules/requests/store.ts) is made from them too.
 */
export function requestJournalSchema(schema: SchemaModule) {
  const table = schema
    .createTable('request_journal')
    // `Request:<uuid v7>`, drawn when the answer is recorded.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    // When the request arrived, on the server's clock (not the platform's sandbox clock).
    .addColumn('created_at', 'text', (c) => c.notNull())
    // When the request arrived, on the platform's sandbox clock.
    .addColumn('sandbox_at', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    // The path and query as sent, under the Grid base path.
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text')
    // Null when the request got no answer (its connection closed first).
    .addColumn('status', 'integer')
    .addColumn('error_code', 'text')
    .addColumn('duration_ms', 'double precision', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text')
    // Who made it: an API token or an agent.
    .addColumn('token_id', 'text')
    .addColumn('agent_id', 'text')
    // JSON text with secrets redacted (src/http/redaction.ts), or a note for a body that is not JSON.
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    // sha256 of the request's path parameters and body as sent (before redaction): two
    // requests with one Idempotency-Key and different hashes reused the key for another request.
    .addColumn('request_hash', 'text')
    // The fault rule that fired on the request (src/http/request-marks.ts), as JSON.
    .addColumn('fault', 'text')
    // 1 when the answer was sent whole; 0 when the connection closed before.
    .addColumn('answered', 'integer', (c) => c.notNull());
  const index = schema
    .createIndex('request_journal_platform')
    .on('request_journal')
    .columns(['platform_id', 'created_at', 'id']);
  return { table, index };
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const { table, index } = requestJournalSchema(db.schema);
  await table.execute();
  await index.execute();
}
