// How a transaction is shown: the reference's IncomingTransaction, OutgoingTransaction and
// CardTransaction shapes, from one row of the transactions table.

import { money } from '../internal-accounts/service.js';
import type { QuotePayout } from '../../rails/index.js';
import type { UmaScenario } from '../../sandbox/magic.js';
import type { CardTransactionStatus } from './schemas.js';
import type * as store from './store.js';

export interface Details {
  remittanceInformation?: string;
  purposeOfPayment?: string;
  cancellationReason?: string;
  /** Incoming UMA payments: who sent it, what the sender disclosed, the sandbox scenario. */
  senderUmaAddress?: string;
  counterpartyInformation?: Record<string, unknown>;
  umaScenario?: UmaScenario;
  /** Set while a pending payment waits for something (TransactionPendingReason). */
  pendingReason?: 'COUNTERPARTY_INFORMATION_REQUIRED';
  /** What the platform told about its customer when approving. */
  receiverCustomerInfo?: Record<string, unknown>;
  /** Card transactions: everything but the authorized total (the row's amount). */
  card?: CardDetails;
}

/**
 * A card transaction's running figures, amounts as decimal strings. `held` is what the open
 * authorization still keeps in the funding account's HELD bucket (a debit's hold, a credit's
 * pending amount); `returns` the returns not reversed, oldest first (a return reversal undoes
 * the last).
 */
export interface CardDetails {
  cardId: string;
  issuerTransactionToken: string;
  direction: 'DEBIT' | 'CREDIT';
  merchant: { descriptor: string; mcc?: string; country?: string };
  held: string;
  settled: string;
  settlements: number;
  /** Net of reversed returns; `refundTotal` and `refunds` count every return received. */
  refunded: string;
  returns: string[];
  refundTotal: string;
  refunds: number;
  pulled: string;
  pulls: number;
  pendingPulls: number;
  authorizedAt: string;
  lastEventAt: string;
}

/**
 * The cross-currency side of a quote's transaction. The row's currency and amount are the
 * sending side (fees included); `internal_account_id` is where the funds are held: the
 * source internal account, or the ledger's SUSPENSE account of the sending currency when
 * the money comes from outside (real-time funding, a pull from an external account).
 */
export interface Conversion {
  quoteId: string;
  funding: 'INTERNAL_ACCOUNT' | 'EXTERNAL_ACCOUNT' | 'REALTIME_FUNDING';
  /** Real-time funding: the customer paying (absent when the platform pays). */
  sourceCustomerId?: string;
  receivingCurrency: string;
  receivingAmount: string;
  exchangeRate: number;
  fees: string;
  platformFees: string;
  /** The platform's internal account in the sending currency, which the platform's fees are settled to. */
  platformFeeAccountId: string | null;
  rateDetails: Record<string, number>;
  destinationType: 'ACCOUNT' | 'UMA_ADDRESS';
  /** What decides the payout's sandbox outcome (the rail plans it at execution). */
  payout: QuotePayout;
  description?: string;
}

export const NO_DETAILS = '{}';

export function conversionOf(row: store.TransactionRow): Conversion | undefined {
  return row.conversion === null ? undefined : (JSON.parse(row.conversion) as Conversion);
}

export function detailsOf(row: store.TransactionRow): Details {
  return row.details === NO_DETAILS ? {} : (JSON.parse(row.details) as Details);
}

export interface RefundView {
  reference: string;
  initiatedAt: string;
  settledAt?: string;
  status: 'PENDING' | 'COMPLETED' | 'FAILED';
  reason: 'TRANSACTION_FAILED' | 'USER_CANCELLATION' | 'TIMEOUT';
}

// note: each view is one object literal, an absent field an undefined value (JSON leaves it
// out). Spreading conditional parts into a view cost about 15 µs per view in V8, more than
// the rest of a transfer's presentation; a literal of one shape costs well under 1 µs.

/**
 * `conversion`: the row's conversion when the caller has it parsed already (it must be this
 * row's, see conversionIn in lifecycle.ts); else it is parsed here.
 */
export function presentTransaction(row: store.TransactionRow, conversion: Conversion | undefined = conversionOf(row)) {
  return row.type === 'INCOMING' ? presentIncoming(row) : presentOutgoing(row, conversion);
}

/** The fields every non-card transaction shows, in the order the views list them. */
function commonFields(row: store.TransactionRow) {
  return {
    id: row.id,
    direction: row.type === 'OUTGOING' ? ('DEBIT' as const) : ('CREDIT' as const),
    // The platform's own transactions name the platform as their customer (the reference's
    // listTransactions filters them with customerId = the platform id).
    customerId: row.customer_id ?? row.platform_id,
    platformCustomerId: row.customer_id === null ? row.platform_id : (row.platform_customer_id ?? ''),
    settledAt: row.settled_at ?? undefined,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    receiptDeliveryConfirmedAt: row.receipt_delivery_confirmed_at ?? undefined,
    refund: row.refund !== null ? (JSON.parse(row.refund) as RefundView) : undefined,
    reconciliationInstructions: { reference: row.reference },
  };
}

function presentIncoming(row: store.TransactionRow) {
  const c = commonFields(row);
  const amount = money(BigInt(row.amount), row.currency);
  // Only an incoming payment shows anything of its details (an outgoing one's are not parsed).
  const details = detailsOf(row);
  const source =
    details.senderUmaAddress !== undefined
      ? ({ sourceType: 'UMA_ADDRESS', umaAddress: details.senderUmaAddress, currency: row.currency } as unknown as {
          sourceType: 'ACCOUNT';
          accountId: string;
          currency: string;
        })
      : { sourceType: 'ACCOUNT' as const, accountId: row.source_account_id, currency: row.currency };
  return {
    id: c.id,
    direction: c.direction,
    source,
    destination: { destinationType: 'ACCOUNT' as const, accountId: row.destination_account_id, currency: row.currency },
    customerId: c.customerId,
    platformCustomerId: c.platformCustomerId,
    settledAt: c.settledAt,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    receiptDeliveryConfirmedAt: c.receiptDeliveryConfirmedAt,
    sentAmount: amount,
    receivedAmount: amount,
    exchangeRate: 1,
    refund: c.refund,
    fees: 0,
    reconciliationInstructions: c.reconciliationInstructions,
    pendingReason: row.status === 'PENDING' ? details.pendingReason : undefined,
    counterpartyInformation: details.counterpartyInformation,
    status: row.status as 'PENDING',
    type: 'INCOMING' as const,
    failureReason: (row.failure_reason ?? undefined) as 'COLLECTION_FAILED' | undefined,
  };
}

function presentOutgoing(row: store.TransactionRow, conversion: Conversion | undefined) {
  const c = commonFields(row);
  const sent = money(BigInt(row.amount), row.currency);
  const sides = conversion !== undefined ? conversionSides(row, conversion) : undefined;
  return {
    id: c.id,
    direction: c.direction,
    source: sides?.source ?? {
      sourceType: 'ACCOUNT' as const,
      accountId: row.source_account_id,
      currency: row.currency,
    },
    destination: sides?.destination ?? {
      destinationType: 'ACCOUNT' as const,
      accountId: row.destination_account_id,
      currency: row.currency,
    },
    customerId: c.customerId,
    platformCustomerId: c.platformCustomerId,
    settledAt: c.settledAt,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    receiptDeliveryConfirmedAt: c.receiptDeliveryConfirmedAt,
    sentAmount: sent,
    receivedAmount:
      conversion !== undefined ? money(BigInt(conversion.receivingAmount), conversion.receivingCurrency) : sent,
    exchangeRate: conversion !== undefined ? conversion.exchangeRate : 1,
    refund: c.refund,
    fees: conversion !== undefined ? Number(conversion.fees) : 0,
    reconciliationInstructions: c.reconciliationInstructions,
    quoteId: conversion?.quoteId,
    rateDetails: conversion?.rateDetails,
    description: conversion?.description,
    status: row.status as 'PROCESSING',
    type: 'OUTGOING' as const,
    platformFees: conversion !== undefined ? Number(conversion.platformFees) : 0,
    failureReason: (row.failure_reason ?? undefined) as 'ACCOUNT_INVALID' | undefined,
    paymentRail: row.payment_rail as 'ACH' | null,
    railSelectionMode: row.rail_selection_mode as 'AUTO' | null,
  };
}

/** The source and destination of a conversion's outgoing transaction. */
function conversionSides(row: store.TransactionRow, conversion: Conversion) {
  const source =
    conversion.funding === 'REALTIME_FUNDING'
      ? {
          sourceType: 'REALTIME_FUNDING' as const,
          currency: row.currency,
          customerId: conversion.sourceCustomerId || undefined,
        }
      : { sourceType: 'ACCOUNT' as const, accountId: row.source_account_id, currency: row.currency };
  const destination =
    conversion.destinationType === 'UMA_ADDRESS'
      ? {
          destinationType: 'UMA_ADDRESS' as const,
          umaAddress: row.destination_account_id,
          currency: conversion.receivingCurrency,
        }
      : {
          destinationType: 'ACCOUNT' as const,
          accountId: row.destination_account_id,
          currency: conversion.receivingCurrency,
        };
  return {
    source: source as unknown as { sourceType: 'ACCOUNT'; accountId: string; currency: string },
    destination: destination as unknown as { destinationType: 'ACCOUNT'; accountId: string; currency: string },
  };
}

export type TransactionView = ReturnType<typeof presentTransaction>;

export function cardDetailsOf(row: store.TransactionRow): CardDetails {
  const card = detailsOf(row).card;
  if (card === undefined) throw new Error(`transaction ${row.id} is not a card transaction`);
  return card;
}

/** A card transaction as the reference's CardTransaction shows it. */
export function presentCardTransaction(row: store.TransactionRow) {
  const card = cardDetailsOf(row);
  const amount = (value: string) => money(BigInt(value), row.currency);
  return {
    type: 'CARD' as const,
    id: row.id,
    cardId: card.cardId,
    customerId: row.customer_id ?? row.platform_id,
    platformCustomerId: row.platform_customer_id ?? '',
    issuerTransactionToken: card.issuerTransactionToken,
    status: row.status as CardTransactionStatus,
    direction: card.direction,
    merchant: card.merchant,
    authorizedAmount: amount(row.amount),
    settledAmount: amount(card.settled),
    refundedAmount: amount(card.refunded),
    accountId: row.internal_account_id,
    pullSummary: { count: card.pulls, totalAmount: Number(card.pulled), pendingCount: card.pendingPulls },
    refundSummary: { count: card.refunds, totalAmount: Number(card.refundTotal) },
    settlementSummary: { count: card.settlements, totalAmount: Number(card.settled) },
    authorizedAt: card.authorizedAt,
    lastEventAt: card.lastEventAt,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export type CardTransactionView = ReturnType<typeof presentCardTransaction>;

/** Any transaction of the list: a card transaction in its own shape, the others as presentTransaction shows them. */
export function presentAnyTransaction(row: store.TransactionRow): TransactionView | CardTransactionView {
  return row.type === 'CARD' ? presentCardTransaction(row) : presentTransaction(row);
}
