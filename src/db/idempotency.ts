// The SQL of idempotency records (see http/command.ts for the rules).

import type { Queryable } from './index.js';

export interface StoredResponse {
  requestHash: string;
  status: number;
  body: string;
}

export async function findRecord(q: Queryable, platformId: string, operationId: string, key: string): Promise<StoredResponse | undefined> {
  const row = await q
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body'])
    .where('platform_id', '=', platformId)
    .where('operation_id', '=', operationId)
    .where('key', '=', key)
    .executeTakeFirst();
  return row && { requestHash: row.request_hash, status: Number(row.response_status), body: row.response_body };
}

/** Claims the key for this transaction; a concurrent claim of the same key waits, then fails. */
export async function insertRecord(q: Queryable, platformId: string, operationId: string, key: string, requestHash: string, now: string): Promise<void> {
  await q
    .insertInto('idempotency_keys')
    .values({ platform_id: platformId, operation_id: operationId, key, request_hash: requestHash, response_status: 0, response_body: '', created_at: now })
    .execute();
}

export async function completeRecord(q: Queryable, platformId: string, operationId: string, key: string, status: number, body: string): Promise<void> {
  await q
    .updateTable('idempotency_keys')
    .set({ response_status: status, response_body: body })
    .where('platform_id', '=', platformId)
    .where('operation_id', '=', operationId)
    .where('key', '=', key)
    .execute();
}
