import { type Insertable, type Selectable, sql } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import { createdUpdatedBounds, paginate, storedTime, type PageRequest } from '../../db/pagination.js';
import type { AgentActionsTable, AgentDeviceCodesTable, AgentsTable } from '../../db/schema.js';

export type AgentRow = AgentsTable;
export type DeviceCodeRow = AgentDeviceCodesTable;
export type ActionRow = Selectable<AgentActionsTable>;

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

/** A code with its platform's clock offset (redeeming names no platform); locked to redeem it. */
export async function findDeviceCode(q: Queryable, code: string, forUpdate = false) {
  let query = q
    .selectFrom('agent_device_codes')
    .innerJoin('platforms', 'platforms.id', 'agent_device_codes.platform_id')
    .selectAll('agent_device_codes')
    .select('platforms.clock_offset_ms')
    .where('agent_device_codes.code', '=', code);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
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

export interface UsageSums {
  dailyCount: number;
  dailyAmount: number;
  monthlyAmount: number;
}

/**
 * Each agent's actions that count (approved or waiting) since the start of the day and of the
 * month: count and amount (limit currency). One query for any number of agents.
 */
export async function usageOf(
  q: Queryable,
  platformId: string,
  agentIds: string[],
  dayIso: string,
  monthIso: string,
): Promise<Map<string, UsageSums>> {
  const sums = new Map<string, UsageSums>();
  if (agentIds.length === 0) return sums;
  const rows = await q
    .selectFrom('agent_actions')
    .select([
      'agent_id',
      sql<string>`SUM(CASE WHEN created_at >= ${dayIso} THEN 1 ELSE 0 END)`.as('daily_count'),
      sql<string>`CAST(SUM(CASE WHEN created_at >= ${dayIso} THEN limit_amount ELSE 0 END) AS TEXT)`.as('daily_amount'),
      sql<string>`CAST(SUM(limit_amount) AS TEXT)`.as('monthly_amount'),
    ])
    .where('platform_id', '=', platformId)
    .where('agent_id', 'in', agentIds)
    .where('status', 'in', ['APPROVED', 'PENDING_APPROVAL'])
    .where('created_at', '>=', monthIso)
    .groupBy('agent_id')
    .execute();
  for (const row of rows) {
    sums.set(row.agent_id, {
      dailyCount: Number(row.daily_count),
      dailyAmount: Number(row.daily_amount),
      monthlyAmount: Number(row.monthly_amount),
    });
  }
  return sums;
}

// ------------------------------------------------------------------------------- actions

export async function insertAction(q: Queryable, row: Insertable<AgentActionsTable>): Promise<void> {
  await q.insertInto('agent_actions').values(row).execute();
}

/** An action of one agent (or, without `agentId`, of any agent of the platform). */
export async function findAction(q: Queryable, platformId: string, id: string, agentId: string, forUpdate = false) {
  let query = q
    .selectFrom('agent_actions')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('agent_id', '=', agentId)
    .where('id', '=', id);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateAction(
  q: Queryable,
  platformId: string,
  id: string,
  patch: Partial<Pick<ActionRow, 'status' | 'transaction_id' | 'rejection_reason' | 'failure_reason' | 'updated_at'>>,
): Promise<void> {
  await q.updateTable('agent_actions').set(patch).where('platform_id', '=', platformId).where('id', '=', id).execute();
}

export interface ActionFilters {
  agentId?: string | undefined;
  customerId?: string | undefined;
  status?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
}

export async function listActions(q: Queryable, platformId: string, filters: ActionFilters, page: PageRequest) {
  let query = q.selectFrom('agent_actions').selectAll().where('platform_id', '=', platformId);
  if (filters.agentId !== undefined) query = query.where('agent_id', '=', filters.agentId);
  if (filters.customerId !== undefined) query = query.where('customer_id', '=', filters.customerId);
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.startDate !== undefined) query = query.where('created_at', '>=', storedTime(filters.startDate, 'from'));
  if (filters.endDate !== undefined) query = query.where('created_at', '<=', storedTime(filters.endDate, 'to'));
  return paginate(query, 'agent_actions', page);
}

/** The action of any agent that waits for approval to execute this quote. */
export async function pendingQuoteAction(q: Queryable, platformId: string, quoteId: string) {
  return q
    .selectFrom('agent_actions')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('quote_id', '=', quoteId)
    .where('status', '=', 'PENDING_APPROVAL')
    .executeTakeFirst();
}

/**
 * Fails the actions a failed payment ends: the approved action that started it, and an
 * execution of its quote still waiting for approval.
 */
export async function failActionsOfPayment(
  q: Queryable,
  platformId: string,
  payment: { transactionId: string; quoteId?: string | undefined },
  reason: string,
  nowIso: string,
): Promise<void> {
  await q
    .updateTable('agent_actions')
    .set({ status: 'FAILED', failure_reason: reason, updated_at: nowIso })
    .where('platform_id', '=', platformId)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'APPROVED'), eb('transaction_id', '=', payment.transactionId)]),
        ...(payment.quoteId !== undefined
          ? [eb.and([eb('status', '=', 'PENDING_APPROVAL'), eb('quote_id', '=', payment.quoteId)])]
          : []),
      ]),
    )
    .execute();
}

/** Rejects every action of the agent still waiting for approval. */
export async function rejectPendingActions(
  q: Queryable,
  platformId: string,
  agentId: string,
  reason: string,
  nowIso: string,
): Promise<void> {
  await q
    .updateTable('agent_actions')
    .set({ status: 'REJECTED', rejection_reason: reason, updated_at: nowIso })
    .where('platform_id', '=', platformId)
    .where('agent_id', '=', agentId)
    .where('status', '=', 'PENDING_APPROVAL')
    .execute();
}
