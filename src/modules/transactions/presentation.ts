// How a transaction is shown: the reference's IncomingTransaction, OutgoingTransaction and
// CardTransaction shapes, from one row of the transactions table.

import { money } from '../internal-accounts/service.js';
import type { QuotePayout } from '../../rails/types.js';
import type { UmaScenario } from '../../rails/magic.js';
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
 * An incoming or outgoing transaction as the reference's IncomingTransaction or
 * OutgoingTransaction shows it: one literal with every key of both shapes in the views' order,
 * those a shape does not have left undefined. `conversion`: the row's conversion when the
 * caller has it parsed already (it must be this row's, see conversionIn in lifecycle.ts); else
 * it is parsed here.
 */
export function presentTransaction(row: store.TransactionRow, conversion: Conversion | undefined = conversionOf(row)) {
  const incoming = row.type === 'INCOMING';
  // Only an incoming payment shows anything of its details (an outgoing one's are not parsed),
  // and only an outgoing one a conversion.
  const details = incoming ? detailsOf(row) : undefined;
  const converted = incoming ? undefined : conversion;
  const sent = money(BigInt(row.amount), row.currency);
  return {
    id: row.id,
    direction: incoming ? ('CREDIT' as const) : ('DEBIT' as const),
    source: sourceOf(row, details?.senderUmaAddress, converted),
    destination: destinationOf(row, converted),
    // The platform's own transactions name the platform as their customer (the reference's
    // listTransactions filters them with customerId = the platform id).
    customerId: row.customer_id ?? row.platform_id,
    platformCustomerId: row.customer_id === null ? row.platform_id : (row.platform_customer_id ?? ''),
    settledAt: row.settled_at ?? undefined,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    receiptDeliveryConfirmedAt: row.receipt_delivery_confirmed_at ?? undefined,
    sentAmount: sent,
    receivedAmount:
      converted !== undefined ? money(BigInt(converted.receivingAmount), converted.receivingCurrency) : sent,
    exchangeRate: converted !== undefined ? converted.exchangeRate : 1,
    refund: row.refund !== null ? (JSON.parse(row.refund) as RefundView) : undefined,
    fees: converted !== undefined ? Number(converted.fees) : 0,
    reconciliationInstructions: { reference: row.reference },
    quoteId: converted?.quoteId,
    rateDetails: converted?.rateDetails,
    description: converted?.description,
    pendingReason: row.status === 'PENDING' ? details?.pendingReason : undefined,
    counterpartyInformation: details?.counterpartyInformation,
    status: row.status as 'PENDING' | 'PROCESSING',
    type: row.type as 'INCOMING' | 'OUTGOING',
    platformFees: incoming ? undefined : converted !== undefined ? Number(converted.platformFees) : 0,
    failureReason: (row.failure_reason ?? undefined) as 'COLLECTION_FAILED' | 'ACCOUNT_INVALID' | undefined,
    paymentRail: incoming ? undefined : (row.payment_rail as 'ACH' | null),
    railSelectionMode: incoming ? undefined : (row.rail_selection_mode as 'AUTO' | null),
  };
}

// The typed shape of a source or destination; the other kinds are cast to it (the views are
// serialized as they are, and the reference's unions are not modelled here).
type AccountSource = { sourceType: 'ACCOUNT'; accountId: string; currency: string };
type AccountDestination = { destinationType: 'ACCOUNT'; accountId: string; currency: string };

/** Where a transaction's money comes from: an UMA sender, real-time funding or an account. */
function sourceOf(
  row: store.TransactionRow,
  senderUmaAddress: string | undefined,
  conversion: Conversion | undefined,
): AccountSource {
  if (senderUmaAddress !== undefined)
    return {
      sourceType: 'UMA_ADDRESS',
      umaAddress: senderUmaAddress,
      currency: row.currency,
    } as unknown as AccountSource;
  if (conversion?.funding === 'REALTIME_FUNDING')
    return {
      sourceType: 'REALTIME_FUNDING',
      currency: row.currency,
      customerId: conversion.sourceCustomerId || undefined,
    } as unknown as AccountSource;
  return { sourceType: 'ACCOUNT', accountId: row.source_account_id, currency: row.currency };
}

/** Where it goes: an account, or an UMA address (a conversion's), in the receiving currency. */
function destinationOf(row: store.TransactionRow, conversion: Conversion | undefined): AccountDestination {
  if (conversion?.destinationType === 'UMA_ADDRESS')
    return {
      destinationType: 'UMA_ADDRESS',
      umaAddress: row.destination_account_id,
      currency: conversion.receivingCurrency,
    } as unknown as AccountDestination;
  return {
    destinationType: 'ACCOUNT',
    accountId: row.destination_account_id,
    currency: conversion !== undefined ? conversion.receivingCurrency : row.currency,
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
