// The SQL of idempotency records (see http/command.ts for the rules). Prepared once: every
// write that carries a key claims it and completes it in two statements. The claim may carry
// the reads the command makes first (prefetch.ts), in the same statement.

import { sql } from 'kysely';
import type { Queryable } from './index.js';
import { type PrefetchRead, prefetch } from './prefetch.js';
import { prepare } from './prepared.js';

export interface StoredResponse {
  requestHash: string;
  status: number;
  body: string;
}

type KeyParams = { platformId: string; operationId: string; key: string };

const selectRecord = prepare<
  KeyParams,
  { request_hash: string; response_status: number | string; response_body: string }
>((k, param) =>
  k
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body'])
    .where('platform_id', '=', param('platformId'))
    .where('operation_id', '=', param('operationId'))
    .where('key', '=', param('key')),
);

export async function findRecord(
  q: Queryable,
  platformId: string,
  operationId: string,
  key: string,
): Promise<StoredResponse | undefined> {
  const row = await selectRecord.first(q, { platformId, operationId, key });
  return row && { requestHash: row.request_hash, status: Number(row.response_status), body: row.response_body };
}

// The claim: inserted unless the key has a record already (a committed one, or one a
// concurrent transaction commits while this waits on it), in one statement.
const claimRow = prepare<KeyParams & { requestHash: string; now: string }, { claimed: number }>((k, param) =>
  k
    .insertInto('idempotency_keys')
    .values({
      platform_id: param('platformId'),
      operation_id: param('operationId'),
      key: param('key'),
      request_hash: param('requestHash'),
      response_status: 0,
      response_body: '',
      created_at: param('now'),
    })
    .onConflict((oc) => oc.columns(['platform_id', 'operation_id', 'key']).doNothing())
    .returning(sql<number>`1`.as('claimed')),
);

/**
 * Claims the key for this transaction: true when claimed, false when the key has a record
 * already (read it with findRecord). A concurrent claim of the same key waits for this
 * transaction to end, then finds this one's record. `reads` are prefetched with the claim,
 * in one statement on PostgreSQL (see prefetch.ts), whether the key is claimed or not.
 */
export async function claimRecord(
  q: Queryable,
  platformId: string,
  operationId: string,
  key: string,
  requestHash: string,
  now: string,
  reads: readonly PrefetchRead[] = [],
): Promise<boolean> {
  return (await prefetch(q, reads, claimRow.read({ platformId, operationId, key, requestHash, now }))) > 0;
}

// The last statement of a command's transaction, whose count nobody reads: on PostgreSQL it
// waits for the COMMIT and goes in the same write (deferred.ts).
const completeRow = prepare<KeyParams & { status: number; body: string }>(
  (k, param) =>
    k
      .updateTable('idempotency_keys')
      .set({ response_status: param('status'), response_body: param('body') })
      .where('platform_id', '=', param('platformId'))
      .where('operation_id', '=', param('operationId'))
      .where('key', '=', param('key')),
  { deferred: true },
);

export async function completeRecord(
  q: Queryable,
  platformId: string,
  operationId: string,
  key: string,
  status: number,
  body: string,
): Promise<void> {
  await completeRow.run(q, { platformId, operationId, key, status, body });
}
