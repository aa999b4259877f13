// Agents: a customer's AI assistant, acting for that customer only, under a policy the
// platform sets. The platform creates an agent and hands its software a device code; the
// software redeems the code (no credentials: the code is the proof) for a bearer access
// token, shown once and stored only as a hash. Deleting the agent ends the token at once.

import { randomBytes } from 'node:crypto';
import { iso, platformNow } from '../../clock.js';
import { currencyInfo } from '../../currencies.js';
import type { Queryable } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { agentTokenHash } from '../../http/auth.js';
import type { Ctx } from '../../http/context.js';
import type { Deps } from '../../http/deps.js';
import { ApiError, apiError, type FieldError, invalidInput } from '../../http/errors.js';
import { prune } from '../../http/schemas.js';
import { newId, randomCode } from '../../ids.js';
import { customerNamedBy } from '../customers/lookup.js';
import * as externalAccounts from '../external-accounts/service.js';
import * as quotes from '../quotes/service.js';
import * as transactions from '../transactions/service.js';
import { findInternalAccount, listCustomerInternalAccounts } from '../internal-accounts/service.js';
import {
  AgentPolicy,
  AgentPolicyUpdateRequest,
  type AgentPermission,
  type PolicyInput,
  type PolicyPatch,
} from './schemas.js';
import * as store from './store.js';

/** How long a device code can be redeemed (sandbox clock). */
export const DEVICE_CODE_TTL_MS = 15 * 60_000;

function notFound(what = 'Agent') {
  return apiError('REFERENCE_NOT_FOUND', `${what} not found`);
}

/** Device codes: eight characters without look-alikes, shown as XXXX-XXXX. */
function newDeviceCode(): string {
  const code = randomCode(8);
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

// ------------------------------------------------------------------------------- policy

/**
 * The checks of a policy the schema cannot make: known currencies, a currency for an
 * approval amount, and accounts that are the customer's own (not checked when the customer
 * is unknown). `prefix` names the fields as the request has them (`policy.` inside createAgent).
 */
async function policyErrors(
  q: Queryable,
  platformId: string,
  customerId: string | undefined,
  policy: PolicyInput,
  prefix: string,
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  if (currencyInfo(policy.spendingLimits.currency) === undefined) {
    errors.push({
      field: `${prefix}spendingLimits.currency`,
      message: `is not a currency railyard knows: ${policy.spendingLimits.currency}`,
    });
  }
  const threshold = policy.approvalThresholds;
  if (threshold?.amount !== undefined && threshold.amount !== null) {
    if (threshold.currency === undefined) {
      errors.push({ field: `${prefix}approvalThresholds.currency`, message: 'is required when amount is set' });
    }
  }
  if (threshold?.currency !== undefined && currencyInfo(threshold.currency) === undefined) {
    errors.push({
      field: `${prefix}approvalThresholds.currency`,
      message: `is not a currency railyard knows: ${threshold.currency}`,
    });
  }
  // Without a known customer there is no one whose accounts these could be.
  if (customerId === undefined) return errors;
  const ownAccount = async (id: string) => {
    const account = await findInternalAccount(q, platformId, id);
    return account !== undefined && account.customer_id === customerId;
  };
  const allowed = policy.accountRestrictions?.allowedAccountIds ?? [];
  for (const [i, id] of allowed.entries()) {
    if (!(await ownAccount(id))) {
      errors.push({
        field: `${prefix}accountRestrictions.allowedAccountIds[${i}]`,
        message: `is not an internal account of customer ${customerId}`,
      });
    }
  }
  for (const [i, rule] of (policy.accountRestrictions?.accountRules ?? []).entries()) {
    if (!(await ownAccount(rule.accountId))) {
      errors.push({
        field: `${prefix}accountRestrictions.accountRules[${i}].accountId`,
        message: `is not an internal account of customer ${customerId}`,
      });
    }
  }
  return errors;
}

/** The policy as stored and shown: permissions once each, in the reference's order. */
function normalizePolicy(policy: PolicyInput): PolicyInput {
  const order: AgentPermission[] = [
    'VIEW_TRANSACTIONS',
    'CREATE_TRANSFERS',
    'CREATE_QUOTES',
    'EXECUTE_QUOTES',
    'MANAGE_EXTERNAL_ACCOUNTS',
  ];
  return { ...policy, permissions: order.filter((p) => policy.permissions.includes(p)) };
}

// ------------------------------------------------------------------------------- presentation

function startOfDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** What agents have spent (in their limit currency) today and this month, UTC, on the sandbox clock. */
async function usageOfAgents(q: Queryable, platformId: string, agentIds: string[], now: Date) {
  const day = startOfDay(now);
  const month = startOfMonth(now);
  const sums = await store.usageOf(q, platformId, agentIds, iso(day), iso(month));
  const nextDay = new Date(day.getTime() + 86_400_000);
  const nextMonth = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));
  return (agentId: string) => {
    const sum = sums.get(agentId);
    return {
      dailyTransactionCount: sum?.dailyCount ?? 0,
      dailySpend: sum?.dailyAmount ?? 0,
      dailyResetDate: nextDay.toISOString().slice(0, 10),
      monthlySpend: sum?.monthlyAmount ?? 0,
      monthlyResetMonth: nextMonth.toISOString().slice(0, 7),
    };
  };
}

export async function agentUsage(q: Queryable, row: store.AgentRow, now: Date) {
  return (await usageOfAgents(q, row.platform_id, [row.id], now))(row.id);
}

type Usage = Awaited<ReturnType<typeof agentUsage>>;

function presentAgentWith(row: store.AgentRow, usage: Usage) {
  return {
    id: row.id,
    name: row.name,
    customerId: row.customer_id,
    isPaused: Number(row.is_paused) === 1,
    isConnected: row.connected_at !== null,
    policy: JSON.parse(row.policy) as PolicyInput,
    usage,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

async function presentAgent(q: Queryable, row: store.AgentRow, now: Date) {
  return presentAgentWith(row, await agentUsage(q, row, now));
}

function presentDeviceCode(row: store.DeviceCodeRow) {
  return { code: row.code, agentId: row.agent_id, expiresAt: row.expires_at, redeemed: row.redeemed_at !== null };
}

// ------------------------------------------------------------------------------- management

async function issueDeviceCode(ctx: Ctx, q: Queryable, agentId: string): Promise<store.DeviceCodeRow> {
  const row: store.DeviceCodeRow = {
    code: newDeviceCode(),
    platform_id: ctx.platformId,
    agent_id: agentId,
    expires_at: iso(new Date(ctx.now.getTime() + DEVICE_CODE_TTL_MS)),
    redeemed_at: null,
    invalidated_at: null,
    created_at: iso(ctx.now),
  };
  await store.insertDeviceCode(q, row);
  return row;
}

export async function createAgent(ctx: Ctx, input: { name: string; customerId: string; policy: PolicyInput }) {
  const policy = prune(input.policy, AgentPolicy) as PolicyInput;
  // An unknown customer is reported with the policy's own problems, in one answer.
  const errors: FieldError[] = [];
  const customer = await customerNamedBy(ctx.db.k, ctx.platformId, input.customerId, 'customerId').catch(
    (err: unknown) => {
      if (!(err instanceof ApiError) || err.code !== 'INVALID_INPUT') throw err;
      errors.push(...((err.details?.errors as FieldError[] | undefined) ?? []));
      return undefined;
    },
  );
  errors.push(...(await policyErrors(ctx.db.k, ctx.platformId, customer?.id, policy, 'policy.')));
  if (errors.length > 0 || customer === undefined) throw invalidInput(errors);
  const now = iso(ctx.now);
  const row: store.AgentRow = {
    id: newId('Agent'),
    platform_id: ctx.platformId,
    customer_id: customer.id,
    name: input.name,
    is_paused: 0,
    policy: JSON.stringify(normalizePolicy(policy)),
    token_hash: null,
    connected_at: null,
    deleted_at: null,
    created_at: now,
    updated_at: now,
  };
  const code = await ctx.db.transaction(async (tx) => {
    await store.insertAgent(tx, row);
    return issueDeviceCode(ctx, tx, row.id);
  });
  return { agent: await presentAgent(ctx.db.k, row, ctx.now), deviceCode: presentDeviceCode(code) };
}

export async function listAgents(ctx: Ctx, query: store.AgentFilters & PageRequest) {
  const page = await store.listAgents(ctx.db.k, ctx.platformId, query, query);
  const ids = page.rows.map((row) => row.id);
  const usage = await usageOfAgents(ctx.db.k, ctx.platformId, ids, ctx.now);
  return toPage(page, (row) => presentAgentWith(row, usage(row.id)));
}

async function liveAgent(ctx: Ctx, q: Queryable, id: string, forUpdate = false): Promise<store.AgentRow> {
  const row = await store.findAgent(q, ctx.platformId, id, forUpdate);
  if (row === undefined) throw notFound();
  return row;
}

export async function getAgent(ctx: Ctx, id: string) {
  return presentAgent(ctx.db.k, await liveAgent(ctx, ctx.db.k, id), ctx.now);
}

export async function updateAgent(
  ctx: Ctx,
  id: string,
  body: { name?: string | undefined; isPaused?: boolean | undefined },
) {
  await liveAgent(ctx, ctx.db.k, id);
  if (body.name === undefined && body.isPaused === undefined) {
    throw invalidInput([
      { field: 'name', message: 'or isPaused is required: the request changes nothing without one' },
    ]);
  }
  const row = await ctx.db.transaction(async (tx) => {
    const current = await liveAgent(ctx, tx, id, true);
    const next = {
      ...current,
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.isPaused !== undefined ? { is_paused: body.isPaused ? 1 : 0 } : {}),
      updated_at: iso(ctx.now),
    };
    await store.updateAgent(tx, ctx.platformId, id, {
      name: next.name,
      is_paused: next.is_paused,
      updated_at: next.updated_at,
    });
    return next;
  });
  return presentAgent(ctx.db.k, row, ctx.now);
}

export async function updateAgentPolicy(ctx: Ctx, id: string, body: PolicyPatch) {
  const patch = prune(body, AgentPolicyUpdateRequest) as PolicyPatch;
  const existing = await liveAgent(ctx, ctx.db.k, id);
  const merge = (current: PolicyInput): PolicyInput => ({
    ...current,
    ...(patch.permissions !== undefined ? { permissions: patch.permissions } : {}),
    ...(patch.defaultExecutionMode !== undefined ? { defaultExecutionMode: patch.defaultExecutionMode } : {}),
    ...(patch.spendingLimits !== undefined
      ? { spendingLimits: { ...current.spendingLimits, ...patch.spendingLimits } as PolicyInput['spendingLimits'] }
      : {}),
    ...(patch.accountRestrictions !== undefined ? { accountRestrictions: patch.accountRestrictions } : {}),
    ...(patch.approvalThresholds !== undefined ? { approvalThresholds: patch.approvalThresholds } : {}),
  });
  const errors = await policyErrors(
    ctx.db.k,
    ctx.platformId,
    existing.customer_id,
    merge(JSON.parse(existing.policy)),
    '',
  );
  if (errors.length > 0) throw invalidInput(errors);
  const row = await ctx.db.transaction(async (tx) => {
    const current = await liveAgent(ctx, tx, id, true);
    const policy = JSON.stringify(normalizePolicy(merge(JSON.parse(current.policy) as PolicyInput)));
    const updatedAt = iso(ctx.now);
    await store.updateAgent(tx, ctx.platformId, id, { policy, updated_at: updatedAt });
    return { ...current, policy, updated_at: updatedAt };
  });
  return presentAgent(ctx.db.k, row, ctx.now);
}

/** Deletes the agent; its access token stops working with this commit, and its waiting actions are rejected. */
export async function deleteAgent(ctx: Ctx, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    await liveAgent(ctx, tx, id, true);
    const now = iso(ctx.now);
    await store.updateAgent(tx, ctx.platformId, id, { deleted_at: now, token_hash: null, updated_at: now });
    await store.invalidateDeviceCodes(tx, ctx.platformId, id, now);
    // What it asked for and was not decided goes with it.
    await store.rejectPendingActions(tx, ctx.platformId, id, 'The agent was deleted', now);
  });
}

export async function regenerateDeviceCode(ctx: Ctx, id: string) {
  const code = await ctx.db.transaction(async (tx) => {
    const agent = await liveAgent(ctx, tx, id, true);
    if (agent.connected_at !== null) {
      throw apiError('CONFLICT', `Agent ${id} is connected already: its software holds an access token`);
    }
    await store.invalidateDeviceCodes(tx, ctx.platformId, id, iso(ctx.now));
    return issueDeviceCode(ctx, tx, id);
  });
  return presentDeviceCode(code);
}

export async function deviceCodeStatus(ctx: Ctx, code: string) {
  const row = await store.findDeviceCode(ctx.db.k, code);
  if (row === undefined || row.platform_id !== ctx.platformId) throw notFound('Device code');
  return { code: row.code, redeemed: row.redeemed_at !== null };
}

/**
 * Redeems a device code for the agent's access token. No credentials: the code is the
 * proof, so it works once, before it expires, and only while it is the agent's latest.
 */
export async function redeemDeviceCode(deps: Deps, code: string) {
  const token = `agt_${randomBytes(32).toString('base64url')}`;
  return deps.db.transaction(async (tx) => {
    const row = await store.findDeviceCode(tx, code, true);
    if (row === undefined) throw notFound('Device code');
    const now = platformNow(deps.clock, Number(row.clock_offset_ms));
    const agent = await store.findAgent(tx, row.platform_id, row.agent_id, true);
    if (agent === undefined) throw notFound('Device code');
    const refuse = (message: string) => invalidInput([{ field: 'code', message }]);
    if (row.redeemed_at !== null) throw refuse(`was already redeemed at ${row.redeemed_at}`);
    if (row.invalidated_at !== null) throw refuse('was replaced by a newer device code of this agent');
    if (row.expires_at <= iso(now)) throw refuse(`expired at ${row.expires_at}; ask the platform for a new one`);
    if (!(await store.redeemDeviceCode(tx, code, iso(now)))) throw refuse('was already redeemed');
    await store.updateAgent(tx, row.platform_id, agent.id, {
      token_hash: agentTokenHash(token),
      connected_at: iso(now),
      updated_at: iso(now),
    });
    return {
      agentId: agent.id,
      agentName: agent.name,
      accessToken: token,
      policy: JSON.parse(agent.policy) as PolicyInput,
    };
  });
}

// ------------------------------------------------------------------------------- the agent itself

/** The calling agent (ctx.agent is set by the bearer-token check). */
export async function callingAgent(ctx: Ctx, q: Queryable = ctx.db.k, forUpdate = false): Promise<store.AgentRow> {
  const row = await store.findAgent(q, ctx.platformId, ctx.agent!.id, forUpdate);
  if (row === undefined)
    throw apiError('UNAUTHORIZED', 'The agent was deleted', { reason: 'unknown or revoked agent access token' });
  return row;
}

export async function getAgentMe(ctx: Ctx) {
  return presentAgent(ctx.db.k, await callingAgent(ctx), ctx.now);
}

/**
 * The agent may do what its policy permits. Operations that declare 403 answer FORBIDDEN;
 * the others (reads) answer 401, the only refusal their contract has.
 */
export function requirePermission(
  agent: store.AgentRow,
  permission: AgentPermission,
  declares403: boolean,
): PolicyInput {
  const policy = JSON.parse(agent.policy) as PolicyInput;
  if (policy.permissions.includes(permission)) return policy;
  const message = `The agent's policy does not grant ${permission}`;
  if (declares403) throw apiError('FORBIDDEN', message, { requiredPermission: permission });
  throw apiError('UNAUTHORIZED', message, {
    reason: `agent lacks the ${permission} permission`,
    requiredPermission: permission,
  });
}

/**
 * The customer's internal accounts. (accountRestrictions limit the accounts the agent may
 * move money from, not what it may see.)
 */
export async function agentInternalAccounts(ctx: Ctx, query: { currency?: string; type?: string } & PageRequest) {
  const agent = await callingAgent(ctx);
  requirePermission(agent, 'VIEW_TRANSACTIONS', false);
  try {
    return await listCustomerInternalAccounts(ctx, { ...query, customerId: agent.customer_id });
  } catch (err) {
    // This operation has no 400 to refuse a cursor it never issued: such a cursor ends the list.
    if (err instanceof ApiError && err.code === 'INVALID_INPUT' && query.cursor !== undefined) {
      return { data: [], hasMore: false };
    }
    throw err;
  }
}

// ------------------------------------------------------------------------------- external accounts

/** The agent's customer's external accounts: reading needs VIEW_TRANSACTIONS or MANAGE_EXTERNAL_ACCOUNTS. */
async function externalAccountReader(ctx: Ctx): Promise<store.AgentRow> {
  const agent = await callingAgent(ctx);
  const policy = JSON.parse(agent.policy) as PolicyInput;
  if (!policy.permissions.includes('MANAGE_EXTERNAL_ACCOUNTS')) requirePermission(agent, 'VIEW_TRANSACTIONS', false);
  return agent;
}

export async function agentListExternalAccounts(ctx: Ctx, query: { currency?: string | undefined } & PageRequest) {
  const agent = await externalAccountReader(ctx);
  return externalAccounts.listExternalAccounts(ctx, { customerId: agent.customer_id, currency: query.currency }, query);
}

export async function agentGetExternalAccount(ctx: Ctx, id: string) {
  const agent = await externalAccountReader(ctx);
  return externalAccounts.getExternalAccount(ctx, id, { customerId: agent.customer_id });
}

export async function agentCreateExternalAccount(
  ctx: Ctx,
  input: externalAccounts.CreateExternalAccountInput & { customerId?: string | undefined },
) {
  const agent = await callingAgent(ctx);
  requirePermission(agent, 'MANAGE_EXTERNAL_ACCOUNTS', false);
  if (input.customerId !== undefined && input.customerId !== agent.customer_id) {
    throw invalidInput([
      { field: 'customerId', message: `must be the agent's customer, ${agent.customer_id}, or left out` },
    ]);
  }
  return externalAccounts.createCustomerExternalAccount(ctx, { ...input, customerId: agent.customer_id });
}

export async function agentDeleteExternalAccount(ctx: Ctx, id: string): Promise<void> {
  const agent = await callingAgent(ctx);
  requirePermission(agent, 'MANAGE_EXTERNAL_ACCOUNTS', false);
  // This operation declares no 409: a trusted beneficiary is refused as something the agent may not do.
  await externalAccounts.deleteExternalAccount(ctx, id, { customerId: agent.customer_id }, (message) =>
    apiError('UNAUTHORIZED', message, {
      reason: 'the account is a trusted beneficiary; only the platform untrusts it',
    }),
  );
}

// ------------------------------------------------------------------------------- transactions and quotes

export async function agentListTransactions(ctx: Ctx, query: transactions.ListTransactionsQuery) {
  const agent = await callingAgent(ctx);
  requirePermission(agent, 'VIEW_TRANSACTIONS', false);
  const { customerId: _c, platformCustomerId: _p, ...rest } = query;
  return transactions.listTransactions(ctx, { ...rest, customerId: agent.customer_id });
}

export async function agentGetTransaction(ctx: Ctx, id: string) {
  const agent = await callingAgent(ctx);
  requirePermission(agent, 'VIEW_TRANSACTIONS', false);
  return transactions.getCustomerTransaction(ctx, id, agent.customer_id);
}

/** Reading a quote needs a quote permission or VIEW_TRANSACTIONS. */
export async function agentGetQuote(ctx: Ctx, id: string) {
  const agent = await callingAgent(ctx);
  const policy = JSON.parse(agent.policy) as PolicyInput;
  if (!policy.permissions.some((p) => p === 'CREATE_QUOTES' || p === 'EXECUTE_QUOTES')) {
    requirePermission(agent, 'VIEW_TRANSACTIONS', false);
  }
  return quotes.getCustomerQuote(ctx, id, agent.customer_id);
}
