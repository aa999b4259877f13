import { sql } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import { createdUpdatedBounds, paginate, type PageRequest } from '../../db/pagination.js';
import type { AgentDeviceCodesTable, AgentsTable } from '../../db/schema.js';

export type AgentRow = AgentsTable;
export type DeviceCodeRow = AgentDeviceCodesTable;

export async function insertAgent(q: Queryable, row: AgentRow): Promise<void> {
  await q.insertInto('agents').values(row).execute();
}

export async function findAgent(q: Queryable, platformId: string, id: string, forUpdate = false) {
  let query = q
    .selectFrom('agents')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export interface AgentFilters {
  customerId?: string | undefined;
  isPaused?: boolean | undefined;
  isConnected?: boolean | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
}

export async function listAgents(q: Queryable, platformId: string, filters: AgentFilters, page: PageRequest) {
  let query = q.selectFrom('agents').selectAll().where('platform_id', '=', platformId).where('deleted_at', 'is', null);
  if (filters.customerId !== undefined) query = query.where('customer_id', '=', filters.customerId);
  if (filters.isPaused !== undefined) query = query.where('is_paused', '=', filters.isPaused ? 1 : 0);
  if (filters.isConnected !== undefined) {
    query = query.where('connected_at', filters.isConnected ? 'is not' : 'is', null);
  }
  for (const [column, op, value] of createdUpdatedBounds(filters)) query = query.where(column, op, value);
  return paginate(query, 'agents', page);
}

export async function updateAgent(
  q: Queryable,
  platformId: string,
  id: string,
  patch: Partial<
    Pick<AgentRow, 'name' | 'is_paused' | 'policy' | 'token_hash' | 'connected_at' | 'deleted_at' | 'updated_at'>
  >,
): Promise<void> {
  await q.updateTable('agents').set(patch).where('platform_id', '=', platformId).where('id', '=', id).execute();
}

// ------------------------------------------------------------------------------- device codes

export async function insertDeviceCode(q: Queryable, row: DeviceCodeRow): Promise<void> {
  await q.insertInto('agent_device_codes').values(row).execute();
}

/** A code with its platform's clock offset (redeeming names no platform). */
export async function findDeviceCode(q: Queryable, code: string) {
  let query = q
    .selectFrom('agent_device_codes')
    .innerJoin('platforms', 'platforms.id', 'agent_device_codes.platform_id')
    .selectAll('agent_device_codes')
    .select('platforms.clock_offset_ms')
    .where('agent_device_codes.code', '=', code);
  if (onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function latestDeviceCode(q: Queryable, platformId: string, agentId: string) {
  return q
    .selectFrom('agent_device_codes')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('agent_id', '=', agentId)
    .orderBy('created_at', 'desc')
    .orderBy('code', 'desc')
    .executeTakeFirst();
}

/** Marks every unredeemed, still valid code of the agent replaced. */
export async function invalidateDeviceCodes(q: Queryable, platformId: string, agentId: string, nowIso: string) {
  await q
    .updateTable('agent_device_codes')
    .set({ invalidated_at: nowIso })
    .where('platform_id', '=', platformId)
    .where('agent_id', '=', agentId)
    .where('redeemed_at', 'is', null)
    .where('invalidated_at', 'is', null)
    .execute();
}

export async function redeemDeviceCode(q: Queryable, code: string, nowIso: string): Promise<boolean> {
  const result = await q
    .updateTable('agent_device_codes')
    .set({ redeemed_at: nowIso })
    .where('code', '=', code)
    .where('redeemed_at', 'is', null)
    .where('invalidated_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ------------------------------------------------------------------------------- usage

/** Approved actions' count and amount (limit currency) since `sinceIso`. */
export async function usageSince(q: Queryable, platformId: string, agentId: string, sinceIso: string) {
  const row = await q
    .selectFrom('agent_actions')
    .select([sql<string>`COUNT(*)`.as('count'), sql<string>`CAST(COALESCE(SUM(limit_amount), 0) AS TEXT)`.as('amount')])
    .where('platform_id', '=', platformId)
    .where('agent_id', '=', agentId)
    .where('status', 'in', ['APPROVED', 'PENDING_APPROVAL'])
    .where('created_at', '>=', sinceIso)
    .executeTakeFirst();
  return { count: Number(row?.count ?? 0), amount: Number(row?.amount ?? 0) };
}
