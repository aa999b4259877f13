// The SQL of webhook delivery: events, deliveries and attempts, and the little of a
// platform's row that delivery needs. note: like the job queue, delivery is kernel and reads
// the platform row itself; going through the platform service would make an import cycle,
// because that service records events (the TEST webhook when the endpoint changes).

import { sql } from 'kysely';
import type { DialectName, Queryable, Tx } from '../db/index.js';
import { paginate, type PageRequest } from '../db/pagination.js';
import { notify } from '../db/notify.js';
import { platformCore } from '../db/platform-row.js';
import { prepare, preparedInsert } from '../db/prepared.js';
import { parseShared } from '../json.js';
import type { EventsTable, WebhookAttemptsTable, WebhookDeliveriesTable } from '../db/schema.js';

export type EventRow = EventsTable;
export type DeliveryRow = WebhookDeliveriesTable;
export type AttemptRow = WebhookAttemptsTable;

export interface WebhookTarget {
  endpoint: string | undefined;
  privateKeyPem: string;
  clockOffsetMs: number;
  /** The tag of the platform's webhook fault rules; null when it has none (src/faults/). */
  faultRules: string | null;
}

/** Where and how a platform's webhooks go: its endpoint (if set), signing key and clock. */
export async function webhookTarget(q: Queryable, platformId: string): Promise<WebhookTarget> {
  const row = await platformCore(q, platformId);
  if (row === undefined) throw new Error(`platform ${platformId} vanished`);
  const endpoint = parseShared<{ webhookEndpoint?: string }>(row.config).webhookEndpoint;
  return {
    endpoint: endpoint || undefined,
    privateKeyPem: row.webhook_private_key,
    clockOffsetMs: Number(row.clock_offset_ms),
    faultRules: row.webhook_fault_rules,
  };
}

// note: the statements every event runs are prepared once (see db/prepared.ts).

const insertEventStatement = prepare<EventRow>(
  (k, param) =>
    k.insertInto('events').values({
      id: param('id'),
      platform_id: param('platform_id'),
      type: param('type'),
      resource_id: param('resource_id'),
      data: param('data'),
      created_at: param('created_at'),
    }),
  // A new row with a fresh id: on PostgreSQL it travels with the transaction's next
  // statement (db/deferred.ts).
  { deferred: true },
);

/** The notification channel of recorded events (db/notify.ts): the payload is the platform's id. */
export const EVENTS_CHANNEL = 'events';

/** Once `q`'s transaction commits, whoever waits for the platform's events hears of one. */
export function announceEvent(q: Queryable, platformId: string): void {
  notify(q, EVENTS_CHANNEL, platformId);
}

export async function insertEvent(q: Queryable, row: EventRow): Promise<void> {
  await insertEventStatement.run(q, row);
  announceEvent(q, row.platform_id);
}

const eventById = prepare<{ id: string }, EventRow>((k, param) =>
  k.selectFrom('events').selectAll().where('id', '=', param('id')),
);

export async function findEvent(q: Queryable, id: string): Promise<EventRow | undefined> {
  return eventById.first(q, { id });
}

const DELIVERY_COLUMNS = [
  'id',
  'platform_id',
  'type',
  'resource_id',
  'status',
  'attempts',
  'job_id',
  'round_started_at',
  'round_trigger',
  'last_attempt_at',
  'delivered_at',
  'created_at',
  'updated_at',
  'fault',
] as const;

// Deliveries and attempts are new rows with fresh ids: on PostgreSQL they travel with the
// transaction's next statement (db/deferred.ts).
const insertDeliveryStatement = preparedInsert('webhook_deliveries', DELIVERY_COLUMNS, 1, { deferred: true });

export async function insertDelivery(q: Queryable, row: DeliveryRow): Promise<void> {
  await insertDeliveryStatement.one(q, row);
}

const deliveryById = prepare<{ id: string; platformId: string }, DeliveryRow>((k, param) =>
  k
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', param('id'))
    .where('platform_id', '=', param('platformId')),
);

export async function findDelivery(q: Queryable, platformId: string, id: string): Promise<DeliveryRow | undefined> {
  return deliveryById.first(q, { id, platformId });
}

export async function updateDelivery(
  q: Queryable,
  id: string,
  changes: Partial<
    Pick<
      DeliveryRow,
      | 'status'
      | 'attempts'
      | 'job_id'
      | 'round_started_at'
      | 'round_trigger'
      | 'last_attempt_at'
      | 'delivered_at'
      | 'updated_at'
      | 'fault'
    >
  >,
): Promise<void> {
  await q.updateTable('webhook_deliveries').set(changes).where('id', '=', id).execute();
}

const ATTEMPT_COLUMNS = [
  'id',
  'platform_id',
  'delivery_id',
  'number',
  'trigger',
  'url',
  'started_at',
  'latency_ms',
  'response_status',
  'response_excerpt',
  'error',
  'outcome',
  'fault',
] as const;

const insertAttemptStatement = preparedInsert('webhook_attempts', ATTEMPT_COLUMNS, 16, { deferred: true });

export async function insertAttempt(q: Queryable, row: AttemptRow): Promise<void> {
  await insertAttemptStatement.one(q, row);
}

/** Several attempts, in as few statements as possible. */
export async function insertAttempts(q: Queryable, rows: readonly AttemptRow[]): Promise<void> {
  await insertAttemptStatement.run(
    q,
    rows.map((row) => ATTEMPT_COLUMNS.map((column) => row[column])),
  );
}

const recordTryStatement = prepare<
  Pick<DeliveryRow, 'id' | 'status' | 'attempts' | 'last_attempt_at' | 'delivered_at' | 'updated_at'>
>((k, param) =>
  k
    .updateTable('webhook_deliveries')
    .set({
      status: param('status'),
      attempts: param('attempts'),
      last_attempt_at: param('last_attempt_at'),
      delivered_at: param('delivered_at'),
      updated_at: param('updated_at'),
    })
    .where('id', '=', param('id')),
);

/** A delivery after a try: its status, count, and times. */
export async function recordTry(
  q: Queryable,
  row: Pick<DeliveryRow, 'id' | 'status' | 'attempts' | 'last_attempt_at' | 'delivered_at' | 'updated_at'>,
): Promise<void> {
  await recordTryStatement.run(q, row);
}

const clockOffsetOf = prepare<{ id: string }, { clock_offset_ms: string | number }>((k, param) =>
  k.selectFrom('platforms').select('clock_offset_ms').where('id', '=', param('id')),
);

/** The platform's sandbox clock offset (milliseconds ahead of the wall clock). */
export async function clockOffsetMs(q: Queryable, platformId: string): Promise<number> {
  return Number((await clockOffsetOf.first(q, { id: platformId }))?.clock_offset_ms ?? 0);
}

export async function listAttempts(q: Queryable, deliveryId: string): Promise<AttemptRow[]> {
  return q.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('number').execute();
}

export interface DeliveryFilters {
  type?: string | undefined;
  status?: string | undefined;
  resourceId?: string | undefined;
}

/** A delivery with the due time of its pending job (when a try is scheduled). */
export type DeliveryWithJob = DeliveryRow & { job_status: string | null; job_due_at_ms: string | number | null };

export async function listDeliveries(q: Queryable, platformId: string, filters: DeliveryFilters, page: PageRequest) {
  let query = q
    .selectFrom('webhook_deliveries')
    .leftJoin('jobs', 'jobs.id', 'webhook_deliveries.job_id')
    .selectAll('webhook_deliveries')
    .select(['jobs.status as job_status', 'jobs.due_at_ms as job_due_at_ms'])
    .where('webhook_deliveries.platform_id', '=', platformId);
  if (filters.type !== undefined) query = query.where('webhook_deliveries.type', '=', filters.type);
  if (filters.status !== undefined) query = query.where('webhook_deliveries.status', '=', filters.status);
  if (filters.resourceId !== undefined) query = query.where('webhook_deliveries.resource_id', '=', filters.resourceId);
  return paginate(query as never, 'webhook_deliveries', page) as Promise<
    import('../db/pagination.js').PageResult<DeliveryWithJob>
  >;
}

/** The platform's deliveries of the events `ids` (an event without one has none). */
export async function deliveriesWithJob(q: Queryable, platformId: string, ids: string[]): Promise<DeliveryWithJob[]> {
  if (ids.length === 0) return [];
  return q
    .selectFrom('webhook_deliveries')
    .leftJoin('jobs', 'jobs.id', 'webhook_deliveries.job_id')
    .selectAll('webhook_deliveries')
    .select(['jobs.status as job_status', 'jobs.due_at_ms as job_due_at_ms'])
    .where('webhook_deliveries.platform_id', '=', platformId)
    .where('webhook_deliveries.id', 'in', ids)
    .execute();
}

export async function findDeliveryWithJob(
  q: Queryable,
  platformId: string,
  id: string,
): Promise<DeliveryWithJob | undefined> {
  return (await deliveriesWithJob(q, platformId, [id]))[0];
}

/**
 * The status of a job, locked for the rest of the transaction on PostgreSQL (so a runner
 * cannot claim it meanwhile; runners skip locked jobs).
 */
export async function lockJobStatus(tx: Tx, dialect: DialectName, jobId: string): Promise<string | undefined> {
  const lock = dialect === 'postgres' ? sql`FOR UPDATE` : sql``;
  const result = await sql<{ status: string }>`SELECT status FROM jobs WHERE id = ${jobId} ${lock}`.execute(tx);
  return result.rows[0]?.status;
}

export interface FailedDeliveryRow {
  id: string;
  type: string;
  resource_id: string;
  status: string;
  attempts: number;
  started_at: string;
  url: string | null;
  response_status: number | null;
  response_excerpt: string | null;
  error: string | null;
}

/** Deliveries not delivered whose latest try failed, with that try, the latest tries first. */
export async function failedDeliveries(q: Queryable, platformId: string, limit: number): Promise<FailedDeliveryRow[]> {
  const result = await sql<FailedDeliveryRow>`
    SELECT d.id, d.type, d.resource_id, d.status, d.attempts,
           a.started_at, a.url, a.response_status, a.response_excerpt, a.error
    FROM webhook_deliveries d
    JOIN webhook_attempts a ON a.delivery_id = d.id
    WHERE d.platform_id = ${platformId} AND d.status <> 'DELIVERED' AND a.outcome = 'FAILED'
      AND a.number = (SELECT MAX(number) FROM webhook_attempts WHERE delivery_id = d.id)
    ORDER BY a.started_at DESC, d.id DESC
    LIMIT ${limit}`.execute(q);
  return result.rows;
}
