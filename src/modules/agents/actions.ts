// Agent actions: the money an agent moves (a quote's execution, a transfer in or out), each
// kept as an action the platform can audit. The agent's policy decides each one:
//   - refused, 403 FORBIDDEN: a permission it lacks, a paused agent, an account outside
//     `accountRestrictions`, a spending limit the amount would pass (the limit in `details`);
//   - run at once: AUTO (the account's rule, else the default mode) and within the approval
//     threshold; the action is APPROVED with its transaction, in the same database transaction;
//   - held: PENDING_APPROVAL, nothing moves, AGENT_ACTION.PENDING_APPROVAL is sent; the platform
//     approves it (it runs then: APPROVED, or FAILED when the run is refused, e.g. an expired
//     quote or too little money) or rejects it (REJECTED, with its reason).
// A held action counts in the agent's usage until it is rejected or fails. The money itself
// moves through the transfers and quotes services, with their checks and sandbox outcomes.

import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { recordEvent } from '../../events/outbox.js';
import { runCommand, type Reply } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { ApiError, apiError, type FieldError } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { hasRate, valueAtMidRate } from '../../rates/index.js';
import * as quotes from '../quotes/service.js';
import { onPaymentFailure, platformCustomerIdOf, presentTransactionById } from '../transactions/service.js';
import * as transfers from '../transfers/service.js';
import type { AgentActionStatusValue, AgentActionTypeValue, PolicyInput } from './schemas.js';
import { agentUsage, callingAgent, requirePermission } from './service.js';
import * as store from './store.js';

interface TransferDetails {
  amount: number;
  currency: string;
  sourceAccountId: string;
  destinationAccountId: string;
}

/** A transfer an agent asks for, as the transfers service takes it. */
type TransferCall =
  | { type: 'TRANSFER_OUT'; input: transfers.TransferOutInput }
  | { type: 'TRANSFER_IN'; input: transfers.TransferInInput };

/** What an action runs, kept so that approving it later runs exactly this. */
type StoredRequest = (TransferCall & { details: TransferDetails }) | { type: 'EXECUTE_QUOTE'; quoteId: string };

/** The money an action moves, as its policy measures it. */
interface Measured {
  /** The customer's account the money leaves (or, for a transfer in, arrives in). */
  accountId: string;
  amount: bigint;
  currency: string;
}

// An approved action whose payment fails later (an SCA challenge never answered, a payout
// the rail returns), or a held execution whose quote expires, fails with it.
onPaymentFailure((tx, failure) =>
  store.failActionsOfPayment(
    tx,
    failure.platformId,
    failure,
    `The payment ${failure.status === 'EXPIRED' ? 'expired' : 'failed'}${failure.failureReason ? ` (${failure.failureReason})` : ''}`,
    iso(failure.now),
  ),
);

// ------------------------------------------------------------------------------- presentation

export async function presentAction(q: Queryable, row: store.ActionRow) {
  const request = JSON.parse(row.request) as StoredRequest;
  const quote = row.quote_id !== null ? await quotes.presentQuoteById(q, row.platform_id, row.quote_id) : undefined;
  const transaction =
    row.transaction_id !== null ? await presentTransactionById(q, row.platform_id, row.transaction_id) : undefined;
  return {
    id: row.id,
    agentId: row.agent_id,
    customerId: row.customer_id,
    platformCustomerId: (await platformCustomerIdOf(q, row.platform_id, row.customer_id)) ?? '',
    status: row.status as AgentActionStatusValue,
    type: row.type as AgentActionTypeValue,
    ...(quote !== undefined ? { quote } : {}),
    ...(request.type !== 'EXECUTE_QUOTE' ? { transferDetails: request.details } : {}),
    ...(transaction !== undefined ? { transaction } : {}),
    ...(row.status === 'REJECTED' && row.rejection_reason !== null ? { rejectionReason: row.rejection_reason } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

async function presentPage(q: Queryable, page: Awaited<ReturnType<typeof store.listActions>>) {
  const data = [];
  for (const row of page.rows) data.push(await presentAction(q, row));
  return { ...toPage(page, (x) => x), data };
}

// ------------------------------------------------------------------------------- policy

function forbidden(message: string, details: Record<string, unknown>) {
  return apiError('FORBIDDEN', message, details);
}

/** The calling agent, locked (so its actions' limits are checked one at a time), allowed `permission` and not paused. */
async function actingAgent(tx: Tx, ctx: Ctx, permission: Parameters<typeof requirePermission>[1]) {
  const agent = await callingAgent(ctx, tx, true);
  const policy = requirePermission(agent, permission, true);
  if (Number(agent.is_paused) === 1) {
    throw forbidden(`Agent ${agent.id} is paused; the platform resumes it with PATCH /agents/${agent.id}`, {
      reason: 'AGENT_PAUSED',
    });
  }
  return { agent, policy };
}

/** An amount in another currency, worth this much in `currency` (mid-market rate, rounded up). */
function measureIn(measured: Measured, currency: string, now: Date): bigint {
  if (measured.currency === currency) return measured.amount;
  if (!hasRate(measured.currency) || !hasRate(currency)) {
    throw forbidden(
      `An amount in ${measured.currency} cannot be measured against the agent's limits in ${currency}: railyard has no rate between them`,
      { currency: measured.currency, limitCurrency: currency },
    );
  }
  return valueAtMidRate(measured.amount, measured.currency, currency, now);
}

/**
 * Checks an action against the policy (403 when it may not happen) and answers its amount in
 * the limit currency and whether it waits for the platform's approval.
 */
async function applyPolicy(q: Queryable, ctx: Ctx, agent: store.AgentRow, policy: PolicyInput, measured: Measured) {
  const allowed = policy.accountRestrictions?.allowedAccountIds;
  if (allowed !== undefined && allowed !== null && !allowed.includes(measured.accountId)) {
    throw forbidden(`The agent's policy does not allow it to move money with account ${measured.accountId}`, {
      accountId: measured.accountId,
      allowedAccountIds: allowed,
    });
  }
  const rule = policy.accountRestrictions?.accountRules?.find((r) => r.accountId === measured.accountId);
  const limits = policy.spendingLimits;
  const amount = measureIn(measured, limits.currency, ctx.now);
  const exceeded = (limit: string, limitAmount: number, message: string, extra: Record<string, unknown> = {}) =>
    forbidden(message, { limit, limitAmount, currency: limits.currency, amount: Number(amount), ...extra });

  const perTransaction = rule?.perTransactionLimit ?? limits.perTransactionLimit;
  if (amount > BigInt(perTransaction)) {
    throw exceeded(
      'perTransactionLimit',
      perTransaction,
      `The amount (${amount} in ${limits.currency}) is over the agent's per-transaction limit of ${perTransaction}`,
      rule?.perTransactionLimit !== undefined && rule.perTransactionLimit !== null ? { accountId: rule.accountId } : {},
    );
  }
  const usage = await agentUsage(q, agent, ctx.now);
  if (limits.dailyTransactionLimit !== undefined && usage.dailyTransactionCount + 1 > limits.dailyTransactionLimit) {
    throw exceeded(
      'dailyTransactionLimit',
      limits.dailyTransactionLimit,
      `The agent has made ${usage.dailyTransactionCount} transactions today, its daily limit; it resets on ${usage.dailyResetDate}`,
      { dailyTransactionCount: usage.dailyTransactionCount },
    );
  }
  if (limits.dailyLimit !== undefined && limits.dailyLimit !== null) {
    if (BigInt(usage.dailySpend) + amount > BigInt(limits.dailyLimit)) {
      throw exceeded(
        'dailyLimit',
        limits.dailyLimit,
        `The amount would take today's spend (${usage.dailySpend} ${limits.currency}) over the agent's daily limit of ${limits.dailyLimit}`,
        { dailySpend: usage.dailySpend },
      );
    }
  }
  if (limits.monthlyLimit !== undefined && limits.monthlyLimit !== null) {
    if (BigInt(usage.monthlySpend) + amount > BigInt(limits.monthlyLimit)) {
      throw exceeded(
        'monthlyLimit',
        limits.monthlyLimit,
        `The amount would take this month's spend (${usage.monthlySpend} ${limits.currency}) over the agent's monthly limit of ${limits.monthlyLimit}`,
        { monthlySpend: usage.monthlySpend },
      );
    }
  }
  let needsApproval = (rule?.executionMode ?? policy.defaultExecutionMode) === 'APPROVAL_REQUIRED';
  const threshold = policy.approvalThresholds;
  if (threshold?.amount !== undefined && threshold.amount !== null && threshold.currency !== undefined) {
    // An amount that cannot be measured against the threshold waits for approval.
    const comparable =
      measured.currency === threshold.currency || (hasRate(measured.currency) && hasRate(threshold.currency));
    if (!comparable || measureIn(measured, threshold.currency, ctx.now) > BigInt(threshold.amount))
      needsApproval = true;
  }
  return { limitAmount: amount, needsApproval };
}

// ------------------------------------------------------------------------------- submitting

interface Submission {
  request: StoredRequest;
  measured: Measured;
  quoteId: string | null;
  /** Moves the money now; answers the transaction's id. */
  run: () => Promise<string>;
}

/** Records an action: run at once when the policy lets it, else held for approval. */
async function submit(
  tx: Tx,
  ctx: Ctx,
  agent: store.AgentRow,
  policy: PolicyInput,
  submission: Submission,
): Promise<store.ActionRow> {
  const decision = await applyPolicy(tx, ctx, agent, policy, submission.measured);
  const now = iso(ctx.now);
  const row: store.ActionRow = {
    id: newId('AgentAction'),
    platform_id: ctx.platformId,
    agent_id: agent.id,
    customer_id: agent.customer_id,
    type: submission.request.type,
    status: 'PENDING_APPROVAL',
    request: JSON.stringify(submission.request),
    quote_id: submission.quoteId,
    transaction_id: null,
    limit_amount: decision.limitAmount.toString(),
    rejection_reason: null,
    failure_reason: null,
    created_at: now,
    updated_at: now,
  };
  if (!decision.needsApproval) {
    // A refusal of the run itself (too little money, say) answers as the platform's own operation would.
    row.transaction_id = await submission.run();
    row.status = 'APPROVED';
    await store.insertAction(tx, row);
    return row;
  }
  await store.insertAction(tx, row);
  await recordEvent(tx, {
    platformId: ctx.platformId,
    type: 'AGENT_ACTION.PENDING_APPROVAL',
    resourceId: row.id,
    data: await presentAction(tx, row),
    now: ctx.now,
  });
  return row;
}

function transferDetails(prepared: transfers.PreparedTransfer, source: string, destination: string): TransferDetails {
  return {
    amount: Number(prepared.amount),
    currency: prepared.internal.currency,
    sourceAccountId: source,
    destinationAccountId: destination,
  };
}

/** The transfers service's checks of a transfer, scoped to the customer. */
function prepareTransfer(tx: Tx, ctx: Ctx, call: TransferCall, customerId: string) {
  return call.type === 'TRANSFER_OUT'
    ? transfers.prepareTransferOut(tx, ctx, call.input, customerId)
    : transfers.prepareTransferIn(tx, ctx, call.input, customerId);
}

/** A transfer out or in as an action: the platform operation's checks, then the policy. */
async function agentTransfer(
  ctx: Ctx,
  operationId: string,
  call: TransferCall,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  const request = { agentId: ctx.agent!.id, input: call.input };
  return runCommand(ctx, { operationId, idempotencyKey, request }, async (tx) => {
    const { agent, policy } = await actingAgent(tx, ctx, 'CREATE_TRANSFERS');
    const prepared = await prepareTransfer(tx, ctx, call, agent.customer_id);
    const { input } = call;
    const row = await submit(tx, ctx, agent, policy, {
      request: { ...call, details: transferDetails(prepared, input.source.accountId, input.destination.accountId) },
      measured: { accountId: prepared.internal.id, amount: prepared.amount, currency: prepared.internal.currency },
      quoteId: null,
      run: async () => (await transfers.executeTransfer(tx, ctx, prepared)).id,
    });
    return { status: 201, body: await presentAction(tx, row) };
  });
}

export function agentCreateTransferOut(
  ctx: Ctx,
  input: transfers.TransferOutInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  return agentTransfer(ctx, 'agentCreateTransferOut', { type: 'TRANSFER_OUT', input }, idempotencyKey);
}

export function agentCreateTransferIn(
  ctx: Ctx,
  input: transfers.TransferInInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  return agentTransfer(ctx, 'agentCreateTransferIn', { type: 'TRANSFER_IN', input }, idempotencyKey);
}

/** The money a quote moves, measured from its source account. */
function quoteMeasure(quote: { source: string; sending_amount: string; sending_currency: string }): Measured {
  const source = JSON.parse(quote.source) as { accountId?: string };
  return { accountId: source.accountId ?? '', amount: BigInt(quote.sending_amount), currency: quote.sending_currency };
}

/**
 * A quote for the agent's customer. With `immediatelyExecute` (which also needs
 * EXECUTE_QUOTES) its execution is an action: run now when the policy lets it, else the
 * quote stays PENDING while the action waits for approval.
 */
export async function agentCreateQuote(
  ctx: Ctx,
  input: quotes.QuoteInput,
  idempotencyKey: string | undefined,
  schemaErrors: FieldError[] = [],
): Promise<Reply> {
  const source = (input as { source?: { sourceType?: unknown } } | null | undefined)?.source;
  if (typeof source === 'object' && source !== null && source.sourceType === 'REALTIME_FUNDING') {
    // Paying its instructions would move money past the agent's policy and approvals.
    schemaErrors.push({
      field: 'source.sourceType',
      message: "cannot be REALTIME_FUNDING for an agent: an agent's money moves from its customer's accounts",
    });
  }
  quotes.checkQuoteRequest(input, schemaErrors);
  const request = { agentId: ctx.agent!.id, input };
  return runCommand(ctx, { operationId: 'agentCreateQuote', idempotencyKey, request }, async (tx) => {
    const { agent, policy } = await actingAgent(tx, ctx, 'CREATE_QUOTES');
    if (input.immediatelyExecute === true) requirePermission(agent, 'EXECUTE_QUOTES', true);
    const opened = await quotes.openCustomerQuote(tx, ctx, input, agent.customer_id);
    let quote = opened.quote;
    if (input.immediatelyExecute === true) {
      await submit(tx, ctx, agent, policy, {
        request: { type: 'EXECUTE_QUOTE', quoteId: quote.id },
        measured: quoteMeasure(quote),
        quoteId: quote.id,
        run: async () => {
          quote = await quotes.executeOpenedQuote(
            tx,
            ctx,
            quote,
            opened.transaction,
            opened.fundsAccount,
            opened.conversion,
          );
          return quote.transaction_id;
        },
      });
    }
    return { status: 201, body: quotes.presentQuote(quote) };
  });
}

export async function agentExecuteQuote(
  ctx: Ctx,
  quoteId: string,
  idempotencyKey: string | undefined,
  walletSignature: string | undefined,
): Promise<Reply> {
  // Refusals that change nothing come first: the permission, another customer's quote (404),
  // then the wallet signature an embedded-wallet quote needs.
  const caller = await callingAgent(ctx);
  requirePermission(caller, 'EXECUTE_QUOTES', true);
  await quotes.getCustomerQuote(ctx, quoteId, caller.customer_id);
  await quotes.requireQuoteSignature(ctx, quoteId, walletSignature);
  const request = { agentId: caller.id, quoteId };
  return runCommand(
    ctx,
    { operationId: 'agentExecuteQuote', idempotencyKey, request, conflictCode: 'CONFLICT' },
    async (tx) => {
      const { agent, policy } = await actingAgent(tx, ctx, 'EXECUTE_QUOTES');
      const { quote, transaction } = await quotes.lockExecutableQuote(tx, ctx, quoteId, agent.customer_id);
      const waiting = await store.pendingQuoteAction(tx, ctx.platformId, quoteId);
      if (waiting !== undefined) {
        throw apiError('CONFLICT', `Quote ${quoteId} already waits for approval in agent action ${waiting.id}`);
      }
      const row = await submit(tx, ctx, agent, policy, {
        request: { type: 'EXECUTE_QUOTE', quoteId },
        measured: quoteMeasure(quote),
        quoteId,
        run: async () => {
          await quotes.executeLockedQuote(tx, ctx, quote, transaction);
          return quote.transaction_id;
        },
      });
      return { status: 200, body: await presentAction(tx, row) };
    },
  );
}

// ------------------------------------------------------------------------------- the agent's view

export async function agentListActions(ctx: Ctx, query: { status?: AgentActionStatusValue | undefined } & PageRequest) {
  const agent = await callingAgent(ctx);
  try {
    const page = await store.listActions(ctx.db.k, ctx.platformId, { agentId: agent.id, status: query.status }, query);
    return presentPage(ctx.db.k, page);
  } catch (err) {
    // This operation has no 400 to refuse a cursor it never issued: such a cursor ends the list.
    if (err instanceof ApiError && err.code === 'INVALID_INPUT' && query.cursor !== undefined) {
      return { data: [], hasMore: false };
    }
    throw err;
  }
}

export async function agentGetAction(ctx: Ctx, actionId: string) {
  const agent = await callingAgent(ctx);
  const row = await store.findAction(ctx.db.k, ctx.platformId, actionId, agent.id);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', `No action ${actionId} of this agent`);
  return presentAction(ctx.db.k, row);
}

// ------------------------------------------------------------------------------- the platform's decision

export async function listApprovals(
  ctx: Ctx,
  query: store.ActionFilters & { sortOrder?: 'asc' | 'desc' | undefined } & PageRequest,
) {
  const { agentId, customerId, startDate, endDate } = query;
  const filters = { agentId, customerId, startDate, endDate, status: 'PENDING_APPROVAL' };
  return presentPage(ctx.db.k, await store.listActions(ctx.db.k, ctx.platformId, filters, query));
}

/** The action, locked, while it still waits for a decision (404 unknown, 409 decided). */
async function pendingAction(tx: Tx, ctx: Ctx, agentId: string, actionId: string): Promise<store.ActionRow> {
  const agent = await store.findAgent(tx, ctx.platformId, agentId);
  if (agent === undefined) throw apiError('REFERENCE_NOT_FOUND', `Agent not found: ${agentId}`);
  const action = await store.findAction(tx, ctx.platformId, actionId, agentId, true);
  if (action === undefined) throw apiError('REFERENCE_NOT_FOUND', `No action ${actionId} of agent ${agentId}`);
  if (action.status !== 'PENDING_APPROVAL') {
    throw apiError(
      'CONFLICT',
      `Action ${actionId} is ${action.status}: only an action waiting for approval can be approved or rejected`,
    );
  }
  return action;
}

/** Runs an approved action's request, scoped to its customer; answers the transaction's id. */
async function runStored(tx: Tx, ctx: Ctx, action: store.ActionRow): Promise<string> {
  const request = JSON.parse(action.request) as StoredRequest;
  switch (request.type) {
    case 'TRANSFER_OUT':
    case 'TRANSFER_IN': {
      const prepared = await prepareTransfer(tx, ctx, request, action.customer_id);
      return (await transfers.executeTransfer(tx, ctx, prepared)).id;
    }
    case 'EXECUTE_QUOTE': {
      const { quote, transaction } = await quotes.lockExecutableQuote(tx, ctx, request.quoteId, action.customer_id);
      await quotes.executeLockedQuote(tx, ctx, quote, transaction);
      return quote.transaction_id;
    }
  }
}

/** Carries a refusal of an approved action's run out of its (rolled back) transaction. */
class RunRefused extends Error {
  constructor(readonly refusal: ApiError) {
    super(refusal.message);
  }
}

/**
 * Approves a held action and runs it. When the run is refused (the quote expired, the
 * money is no longer there, an account went away) nothing of it stays and the action is
 * FAILED; the reason is kept and logged (the reference's AgentAction has no field for it).
 */
export async function approveAction(ctx: Ctx, agentId: string, actionId: string) {
  try {
    const row = await ctx.db.transaction(async (tx) => {
      const action = await pendingAction(tx, ctx, agentId, actionId);
      let transactionId: string;
      try {
        transactionId = await runStored(tx, ctx, action);
      } catch (err) {
        if (err instanceof ApiError) throw new RunRefused(err);
        throw err;
      }
      const next = { ...action, status: 'APPROVED', transaction_id: transactionId, updated_at: iso(ctx.now) };
      await store.updateAction(tx, ctx.platformId, actionId, {
        status: next.status,
        transaction_id: transactionId,
        updated_at: next.updated_at,
      });
      return next;
    });
    return await presentAction(ctx.db.k, row);
  } catch (err) {
    if (!(err instanceof RunRefused)) throw err;
    const row = await ctx.db.transaction(async (tx) => {
      const action = await pendingAction(tx, ctx, agentId, actionId);
      const next = { ...action, status: 'FAILED', failure_reason: err.refusal.message, updated_at: iso(ctx.now) };
      await store.updateAction(tx, ctx.platformId, actionId, {
        status: next.status,
        failure_reason: next.failure_reason,
        updated_at: next.updated_at,
      });
      return next;
    });
    ctx.log.info({ actionId, code: err.refusal.code, reason: err.refusal.message }, 'approved agent action failed');
    return presentAction(ctx.db.k, row);
  }
}

export async function rejectAction(ctx: Ctx, agentId: string, actionId: string, reason: string | undefined) {
  const row = await ctx.db.transaction(async (tx) => {
    const action = await pendingAction(tx, ctx, agentId, actionId);
    const next = { ...action, status: 'REJECTED', rejection_reason: reason ?? null, updated_at: iso(ctx.now) };
    await store.updateAction(tx, ctx.platformId, actionId, {
      status: next.status,
      rejection_reason: next.rejection_reason,
      updated_at: next.updated_at,
    });
    return next;
  });
  return presentAction(ctx.db.k, row);
}
