// The approval handshake of incoming payments. The money area creates an incoming payment
// and calls requestIncomingPaymentApproval in the same transaction: railyard sends
// INCOMING_PAYMENT.PENDING (once, never retried) and reads the answer. 200 (any 2xx but
// 202) approves, 403 rejects, 422 asks for more counterparty information, 202 leaves the
// decision to POST /transactions/{id}/approve or /reject within 5 s of sandbox time, after
// which the payment is rejected as timed out; any other answer, or none, fails it. Each
// decision is handed to the money area through IncomingPaymentHooks, in the transaction that
// records it: approval completes the payment and credits the account, anything else but a
// 422 fails it (REJECTED for a refusal) and releases the pending credit.

import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { onWebhookAnswer, type AnswerContext, type DeliveryStatus } from '../../events/delivery.js';
import { recordEvent } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import { apiError, type FieldError } from '../../http/errors.js';
import { defineJob } from '../../jobs/queue.js';
import { plainObject } from '../../json.js';
import { readPlatformConfig } from '../platform/config.js';
import type { IncomingTransactionView } from './schemas.js';
import * as store from './store.js';

/** How long after a 202 the platform has to approve or reject. */
export const APPROVAL_WINDOW_MS = 5_000;

export interface CounterpartyField {
  name: string;
  mandatory: boolean;
}

export type ApprovalOutcome =
  | { kind: 'APPROVED'; by: 'WEBHOOK' | 'API' | 'NO_ENDPOINT'; receiverCustomerInfo?: Record<string, unknown> }
  | { kind: 'REJECTED'; by: 'WEBHOOK' | 'API'; reason?: string }
  /** 422: the platform needs more information about the sender before it decides. */
  | { kind: 'INFORMATION_REQUIRED'; by: 'WEBHOOK'; requiredFields: string[] }
  /** A 200 that lacks mandatory receiver fields the webhook asked for. */
  | { kind: 'MISSING_RECEIVER_INFO'; by: 'WEBHOOK'; missingFields: string[] }
  | { kind: 'TIMED_OUT'; by: 'TIMEOUT' }
  | { kind: 'WEBHOOK_ERROR'; by: 'WEBHOOK'; status?: number; error?: string };

export interface DecisionInput {
  platformId: string;
  transactionId: string;
  outcome: ApprovalOutcome;
  /** The transaction as the PENDING webhook showed it. */
  transaction: IncomingTransactionView;
  now: Date;
}

/**
 * What the money area provides (setIncomingPaymentHooks). applyDecision runs in the
 * transaction that records the decision: it moves the incoming transaction on (settle,
 * reject, fail) with its ledger postings and events, and returns it as it now is.
 * findTransaction tells an unknown id (404) from a payment that is not pending (409).
 */
export interface IncomingPaymentHooks {
  applyDecision(tx: Tx, input: DecisionInput): Promise<IncomingTransactionView>;
  findTransaction(
    q: Queryable,
    platformId: string,
    transactionId: string,
  ): Promise<IncomingTransactionView | undefined>;
}

// Registered by the money area (transactions service) when it loads.
let hooks: IncomingPaymentHooks | undefined;

function moneyHooks(): IncomingPaymentHooks {
  if (hooks === undefined) throw new Error('no money area registered its incoming-payment hooks');
  return hooks;
}

export function setIncomingPaymentHooks(next: IncomingPaymentHooks): void {
  hooks = next;
}

// ----------------------------------------------------------------------------- asking

export interface ApprovalRequest {
  platformId: string;
  /** The incoming transaction, already stored by the caller, in PENDING. */
  transaction: IncomingTransactionView;
  /** Receiver fields the platform must return when approving. */
  requestedReceiverCustomerInfoFields?: CounterpartyField[];
  now: Date;
}

export interface ApprovalRequested {
  /** The INCOMING_PAYMENT.PENDING event. */
  eventId: string;
  /** Set when the decision was made at once (no webhook endpoint: nobody to ask, so approved). */
  decided?: IncomingTransactionView;
}

/**
 * In the caller's transaction: records INCOMING_PAYMENT.PENDING and opens the approval. The
 * answer arrives later, through the webhook's delivery. A transaction whose last round ended
 * (after a 422, say) may be asked again.
 */
export async function requestIncomingPaymentApproval(tx: Tx, request: ApprovalRequest): Promise<ApprovalRequested> {
  const { platformId, transaction, now } = request;
  const existing = await store.findApproval(tx, platformId, transaction.id);
  if (existing !== undefined && (store.OPEN_STATUSES as readonly string[]).includes(existing.status)) {
    throw new Error(`incoming payment ${transaction.id} already awaits a decision`);
  }
  const fields = request.requestedReceiverCustomerInfoFields ?? [];
  const data = fields.length > 0 ? { ...transaction, requestedReceiverCustomerInfoFields: fields } : transaction;
  const eventId = await recordEvent(tx, {
    platformId,
    type: 'INCOMING_PAYMENT.PENDING',
    resourceId: transaction.id,
    data,
    now,
  });
  const row: store.ApprovalRow = {
    transaction_id: transaction.id,
    platform_id: platformId,
    event_id: eventId,
    status: 'AWAITING_WEBHOOK',
    transaction: JSON.stringify(transaction),
    requested_fields: JSON.stringify(fields),
    decision_deadline: null,
    decided_by: null,
    decision: null,
    decided_at: null,
    created_at: iso(now),
    updated_at: iso(now),
  };
  await store.putApproval(tx, row, existing !== undefined);
  if ((await readPlatformConfig(tx, platformId)).webhookEndpoint === undefined) {
    return { eventId, decided: await decide(tx, row, { kind: 'APPROVED', by: 'NO_ENDPOINT' }, now) };
  }
  return { eventId };
}

/** Closes an open approval with `outcome` and hands it to the money area; undefined if already closed. */
async function decide(
  tx: Tx,
  approval: store.ApprovalRow,
  outcome: ApprovalOutcome,
  now: Date,
): Promise<IncomingTransactionView | undefined> {
  const { kind, by, ...detail } = outcome;
  const moved = await store.moveApproval(tx, approval.transaction_id, store.OPEN_STATUSES, {
    status: kind,
    decided_by: by,
    decision: JSON.stringify(detail),
    decided_at: iso(now),
    updated_at: iso(now),
  });
  if (!moved) return undefined;
  return moneyHooks().applyDecision(tx, {
    platformId: approval.platform_id,
    transactionId: approval.transaction_id,
    outcome,
    transaction: JSON.parse(approval.transaction) as IncomingTransactionView,
    now,
  });
}

const approvalTimeout = defineJob<{ transactionId: string; eventId: string }>('incoming-payment.approval-timeout', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const approval = await store.findApproval(tx, job.platformId, job.payload.transactionId);
    if (approval === undefined || approval.event_id !== job.payload.eventId || approval.status !== 'AWAITING_DECISION')
      return;
    await decide(tx, approval, { kind: 'TIMED_OUT', by: 'TIMEOUT' }, ctx.now);
  },
});

// ----------------------------------------------------------------------------- the answer

function parseJson(text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  try {
    return plainObject(JSON.parse(text)) ?? {};
  } catch {
    return {};
  }
}

function missingMandatory(approval: store.ApprovalRow, info: Record<string, unknown> | undefined): string[] {
  const fields = JSON.parse(approval.requested_fields) as CounterpartyField[];
  return fields
    .filter((f) => f.mandatory && (info?.[f.name] === undefined || info[f.name] === null || info[f.name] === ''))
    .map((f) => f.name);
}

/** What the receiver's answer to INCOMING_PAYMENT.PENDING decides. */
function outcomeOfAnswer(approval: store.ApprovalRow, answer: AnswerContext['answer']): ApprovalOutcome | 'LATER' {
  const { status } = answer;
  if (status === undefined) return { kind: 'WEBHOOK_ERROR', by: 'WEBHOOK', error: answer.error ?? 'no answer' };
  if (status === 202) return 'LATER';
  const body = parseJson(answer.body);
  if (status >= 200 && status < 300) {
    const info = plainObject(body.receiverCustomerInfo);
    const missing = missingMandatory(approval, info);
    if (missing.length > 0) return { kind: 'MISSING_RECEIVER_INFO', by: 'WEBHOOK', missingFields: missing };
    return { kind: 'APPROVED', by: 'WEBHOOK', ...(info ? { receiverCustomerInfo: info } : {}) };
  }
  if (status === 403) {
    const reason =
      typeof body.reason === 'string' ? body.reason : typeof body.message === 'string' ? body.message : undefined;
    return { kind: 'REJECTED', by: 'WEBHOOK', ...(reason !== undefined ? { reason } : {}) };
  }
  if (status === 422) {
    const required = Array.isArray(body.requiredFields)
      ? body.requiredFields.filter((f): f is string => typeof f === 'string')
      : [];
    return { kind: 'INFORMATION_REQUIRED', by: 'WEBHOOK', requiredFields: required };
  }
  return { kind: 'WEBHOOK_ERROR', by: 'WEBHOOK', status };
}

onWebhookAnswer('INCOMING_PAYMENT.PENDING', async (tx, context): Promise<DeliveryStatus | undefined> => {
  const approval = await store.findApproval(tx, context.platformId, context.resourceId);
  // An informational PENDING (a bank rail), a replay, or a decision already made via the API.
  if (approval === undefined || approval.event_id !== context.eventId || approval.status !== 'AWAITING_WEBHOOK')
    return undefined;
  const outcome = outcomeOfAnswer(approval, context.answer);
  if (outcome === 'LATER') {
    const deadline = new Date(context.now.getTime() + APPROVAL_WINDOW_MS);
    await store.moveApproval(tx, approval.transaction_id, ['AWAITING_WEBHOOK'], {
      status: 'AWAITING_DECISION',
      decision_deadline: iso(deadline),
      updated_at: iso(context.now),
    });
    await approvalTimeout.schedule(tx, {
      platformId: approval.platform_id,
      payload: { transactionId: approval.transaction_id, eventId: approval.event_id },
      dueAt: deadline,
      now: context.now,
    });
    return 'DELIVERED';
  }
  await decide(tx, approval, outcome, context.now);
  // A deliberate answer of the handshake is a delivered webhook, whatever its status.
  return outcome.kind === 'WEBHOOK_ERROR' ? undefined : 'DELIVERED';
});

// ----------------------------------------------------------------------------- the API

function notPending(transactionId: string, why: string) {
  return apiError(
    'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL',
    `Transaction ${transactionId} is not waiting for the platform's approval: ${why}`,
  );
}

const DESCRIBE: Record<string, string> = {
  APPROVED: 'it was already approved',
  REJECTED: 'it was already rejected',
  INFORMATION_REQUIRED: 'more counterparty information was asked for',
  MISSING_RECEIVER_INFO: 'the approval lacked mandatory receiver information',
  TIMED_OUT: 'the approval window has passed',
  WEBHOOK_ERROR: 'the approval webhook failed',
};

type Decided = { view: IncomingTransactionView } | { timedOut: true };

/** The shared path of approve and reject: lookups (404), state (409), then the decision. */
async function decideByApi(
  ctx: Ctx,
  transactionId: string,
  outcomeFor: (approval: store.ApprovalRow) => ApprovalOutcome,
) {
  const result = await ctx.db.transaction(async (tx): Promise<Decided> => {
    const approval = await store.findApproval(tx, ctx.platformId, transactionId);
    if (approval === undefined) {
      if ((await moneyHooks().findTransaction(tx, ctx.platformId, transactionId)) === undefined) {
        throw apiError('TRANSACTION_NOT_FOUND', `No transaction ${transactionId}`);
      }
      throw notPending(transactionId, 'it never asked for one');
    }
    if (!(store.OPEN_STATUSES as readonly string[]).includes(approval.status)) {
      throw notPending(transactionId, DESCRIBE[approval.status] ?? approval.status);
    }
    if (approval.decision_deadline !== null && approval.decision_deadline <= iso(ctx.now)) {
      // The timeout job has not run yet; the window is over all the same.
      await decide(tx, approval, { kind: 'TIMED_OUT', by: 'TIMEOUT' }, ctx.now);
      return { timedOut: true };
    }
    const outcome = outcomeFor(approval);
    // Past this line the decision is made.
    const view = await decide(tx, approval, outcome, ctx.now);
    if (view === undefined) throw notPending(transactionId, 'another decision was made at the same moment');
    return { view };
  });
  if ('timedOut' in result) throw notPending(transactionId, DESCRIBE.TIMED_OUT!);
  return result.view;
}

export async function approvePendingPayment(
  ctx: Ctx,
  transactionId: string,
  body: { receiverCustomerInfo?: Record<string, unknown> },
) {
  return decideByApi(ctx, transactionId, (approval) => {
    const missing = missingMandatory(approval, body.receiverCustomerInfo);
    if (missing.length > 0) {
      const errors: FieldError[] = missing.map((name) => ({
        field: `receiverCustomerInfo.${name}`,
        message: 'is required by this payment',
      }));
      throw apiError(
        'MISSING_MANDATORY_USER_INFO',
        `The payment asks for receiver information: ${missing.join(', ')}`,
        { errors },
      );
    }
    return {
      kind: 'APPROVED',
      by: 'API',
      ...(body.receiverCustomerInfo ? { receiverCustomerInfo: body.receiverCustomerInfo } : {}),
    };
  });
}

export async function rejectPendingPayment(ctx: Ctx, transactionId: string, body: { reason?: string }) {
  return decideByApi(ctx, transactionId, () => ({
    kind: 'REJECTED',
    by: 'API',
    ...(body.reason !== undefined ? { reason: body.reason } : {}),
  }));
}
