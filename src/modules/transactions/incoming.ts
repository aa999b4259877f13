// Incoming UMA payments: accepted as a pending credit, then decided by the platform through
// the approval handshake (payment-approvals), whose decision comes back through the hooks
// registered here.

import type { Tx } from '../../db/index.js';
import { newId } from '../../ids.js';
import {
  requestIncomingPaymentApproval,
  setIncomingPaymentHooks,
  type CounterpartyField,
  type DecisionInput,
  type IncomingPaymentHooks,
} from '../payment-approvals/service.js';
import type { IncomingTransactionView } from '../payment-approvals/schemas.js';
import { UMA_PENDING_LONG_MS, type UmaScenario } from '../../rails/magic.js';
import {
  complete,
  fail,
  finish,
  newRow,
  next,
  openWork,
  railStepJob,
  returnIncoming,
  emit,
  type Work,
} from './lifecycle.js';
import { type Details, detailsOf, presentTransaction, type TransactionView } from './presentation.js';
import * as store from './store.js';

export interface NewIncomingUmaPayment {
  platformId: string;
  customerId: string;
  platformCustomerId: string | null;
  internalAccountId: string;
  currency: string;
  amount: bigint;
  senderUmaAddress: string;
  counterpartyInformation: Record<string, unknown>;
  scenario: UmaScenario;
  /** Receiver fields the platform must return when it approves (none for sandbox payments). */
  requestedReceiverCustomerInfoFields?: CounterpartyField[];
  /** The external account to deposit in instead of the internal account (see depositsExternally). */
  depositAccountId?: string | undefined;
}

function asIncomingView(row: store.TransactionRow): IncomingTransactionView {
  return presentTransaction(row) as unknown as IncomingTransactionView;
}

/**
 * Accepts an incoming UMA payment in the caller's transaction: the amount is credited as
 * pending (HELD; throws BalanceLimitExceeded past the maximum), or received into SUSPENSE
 * when it is bound for `depositAccountId`; the transaction is written in PENDING, and the
 * platform is asked to approve it. A sender that fails compliance fails the
 * payment at once instead, before anyone is asked. Answers the transaction as it is when the
 * caller's transaction commits (already COMPLETED when the platform has no webhook endpoint).
 */
export async function receiveUmaPayment(tx: Tx, input: NewIncomingUmaPayment, now: Date): Promise<TransactionView> {
  const id = newId('Transaction');
  const work = openWork(tx, input.platformId, now);
  if (input.depositAccountId !== undefined) await work.books.receiveFunding(input.currency, input.amount, id);
  else await work.books.acceptIncoming(input.internalAccountId, input.currency, input.amount, id);
  const details: Details = {
    senderUmaAddress: input.senderUmaAddress,
    counterpartyInformation: input.counterpartyInformation,
    umaScenario: input.scenario,
  };
  let row: store.TransactionRow = newRow(
    {
      id,
      platform_id: input.platformId,
      type: 'INCOMING',
      status: 'PENDING',
      customer_id: input.customerId,
      platform_customer_id: input.platformCustomerId,
      internal_account_id: input.internalAccountId,
      // The sender stands where a transfer has its external account (filters read these columns).
      external_account_id: input.senderUmaAddress,
      source_account_id: input.senderUmaAddress,
      destination_account_id: input.depositAccountId ?? input.internalAccountId,
      currency: input.currency,
      amount: input.amount.toString(),
      payment_rail: null,
      rail_selection_mode: null,
      details: JSON.stringify(details),
    },
    now,
  );
  if (input.scenario === 'FAIL_COMPLIANCE') row = await fail(work, row, 'COMPLIANCE_REJECTED');
  await store.insertTransaction(tx, row);
  await finish(work);
  if (row.status !== 'PENDING') return presentTransaction(row);

  const asked = await requestIncomingPaymentApproval(tx, {
    platformId: input.platformId,
    transaction: asIncomingView(row),
    ...(input.requestedReceiverCustomerInfoFields
      ? { requestedReceiverCustomerInfoFields: input.requestedReceiverCustomerInfoFields }
      : {}),
    now,
  });
  return asked.decided !== undefined ? (asked.decided as unknown as TransactionView) : presentTransaction(row);
}

/** The platform declined the payment: the pending credit goes back to where it came from. */
async function reject(work: Work, row: store.TransactionRow): Promise<store.TransactionRow> {
  await returnIncoming(work, row);
  const rejected = next(work, row, { status: 'REJECTED' });
  // The reference has no REJECTED event: a declined payment is reported as failed.
  emit(work, rejected, 'FAILED');
  return rejected;
}

function withDetails(row: store.TransactionRow, change: (details: Details) => Details): store.TransactionRow {
  return { ...row, details: JSON.stringify(change(detailsOf(row))) };
}

/** Carries out the platform's decision on a pending incoming payment, in the deciding transaction. */
async function applyIncomingDecision(tx: Tx, input: DecisionInput): Promise<IncomingTransactionView> {
  const row = await store.lockTransaction(tx, input.platformId, input.transactionId);
  if (row === undefined) throw new Error(`incoming transaction ${input.transactionId} does not exist`);
  if (row.type !== 'INCOMING' || row.status !== 'PENDING') return asIncomingView(row);
  const work = openWork(tx, input.platformId, input.now);
  const { outcome } = input;
  let after: store.TransactionRow;
  switch (outcome.kind) {
    case 'APPROVED': {
      const approved = withDetails(row, ({ pendingReason: _reason, ...rest }) => ({
        ...rest,
        ...(outcome.receiverCustomerInfo !== undefined ? { receiverCustomerInfo: outcome.receiverCustomerInfo } : {}),
      }));
      if (detailsOf(row).umaScenario === 'PENDING_LONG') {
        // Approved, but the sender's side takes long: the credit stays pending until then. The
        // payment looks as it did (no event), so its updatedAt stays that of its last event.
        after = approved;
        await railStepJob.schedule(tx, {
          platformId: input.platformId,
          payload: { transactionId: row.id, outcome: { kind: 'COMPLETED' } },
          dueAt: new Date(input.now.getTime() + UMA_PENDING_LONG_MS),
          now: input.now,
        });
      } else {
        after = await complete(work, approved);
      }
      break;
    }
    case 'REJECTED':
      after = await reject(work, row);
      break;
    case 'INFORMATION_REQUIRED':
      // Still pending, credit still held, until the platform is asked again.
      after = next(
        work,
        withDetails(row, (d) => ({ ...d, pendingReason: 'COUNTERPARTY_INFORMATION_REQUIRED' })),
        {},
      );
      break;
    case 'MISSING_RECEIVER_INFO':
      after = await fail(work, row, 'MISSING_MANDATORY_PAYEE_DATA');
      break;
    case 'TIMED_OUT':
      after = await fail(work, row, 'PAYMENT_APPROVAL_TIMED_OUT');
      break;
    case 'WEBHOOK_ERROR':
      after = await fail(work, row, 'PAYMENT_APPROVAL_WEBHOOK_ERROR');
      break;
  }
  await store.saveState(tx, after);
  await finish(work);
  return asIncomingView(after);
}

/** The money side of the approval handshake. */
export const incomingPaymentHooks: IncomingPaymentHooks = {
  applyDecision: applyIncomingDecision,
  async findTransaction(q, platformId, transactionId) {
    const row = await store.findTransaction(q, platformId, transactionId);
    return row === undefined ? undefined : asIncomingView(row);
  },
};

setIncomingPaymentHooks(incomingPaymentHooks);
