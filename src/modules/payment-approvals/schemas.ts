import { Type, type Static } from '@sinclair/typebox';
import { component, DateTime, StringEnum } from '../../http/schemas.js';

export const TRANSACTION_STATUSES = [
  'CREATED', 'PENDING', 'PENDING_AUTHORIZATION', 'PROCESSING', 'COMPLETED', 'REJECTED', 'FAILED', 'REFUNDED', 'EXPIRED',
] as const;
export const TRANSACTION_PENDING_REASONS = [
  'COUNTERPARTY_DECLARATION_REQUIRED', 'WALLET_VERIFICATION_REQUIRED', 'COUNTERPARTY_INFORMATION_REQUIRED', 'COMPLIANCE_REVIEW',
] as const;
export const INCOMING_FAILURE_REASONS = [
  'LNURLP_FAILED', 'PAY_REQUEST_FAILED', 'PAYMENT_APPROVAL_WEBHOOK_ERROR', 'PAYMENT_APPROVAL_TIMED_OUT', 'OFFRAMP_FAILED',
  'MISSING_MANDATORY_PAYEE_DATA', 'QUOTE_EXPIRED', 'QUOTE_EXECUTION_FAILED', 'COMPLIANCE_REJECTED', 'COLLECTION_FAILED',
] as const;

// note: a stand-in for the money area's IncomingTransaction (issue 4), which owns incoming
// transactions. It carries the reference's fields, with the nested objects kept open; once
// that area is merged, its schema replaces this one (see the README's wiring notes).
const Amount = Type.Object({
  amount: Type.Integer(),
  currency: Type.Object({
    code: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    symbol: Type.Optional(Type.String()),
    decimals: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
});

export const IncomingTransaction = component(
  'IncomingTransaction',
  Type.Object({
    id: Type.String(),
    status: StringEnum(TRANSACTION_STATUSES),
    pendingReason: Type.Optional(StringEnum(TRANSACTION_PENDING_REASONS)),
    type: StringEnum(['INCOMING']),
    direction: StringEnum(['CREDIT', 'DEBIT']),
    source: Type.Optional(
      Type.Object(
        {
          sourceType: StringEnum(['ACCOUNT', 'UMA_ADDRESS', 'REALTIME_FUNDING']),
          currency: Type.Optional(Type.String()),
          accountId: Type.Optional(Type.String()),
          umaAddress: Type.Optional(Type.String()),
          customerId: Type.Optional(Type.String()),
        },
        { additionalProperties: true },
      ),
    ),
    destination: Type.Object(
      {
        destinationType: StringEnum(['ACCOUNT', 'UMA_ADDRESS']),
        currency: Type.Optional(Type.String()),
        accountId: Type.Optional(Type.String()),
        umaAddress: Type.Optional(Type.String()),
      },
      { additionalProperties: true },
    ),
    customerId: Type.String(),
    platformCustomerId: Type.String(),
    settledAt: Type.Optional(DateTime),
    createdAt: Type.Optional(DateTime),
    updatedAt: Type.Optional(DateTime),
    receiptDeliveryConfirmedAt: Type.Optional(DateTime),
    agentId: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    sentAmount: Type.Optional(Amount),
    receivedAmount: Amount,
    exchangeRate: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    quoteId: Type.Optional(Type.String()),
    fees: Type.Optional(Type.Integer({ minimum: 0 })),
    refund: Type.Optional(Type.Object({ reference: Type.String(), initiatedAt: DateTime, status: StringEnum(['PENDING', 'COMPLETED', 'FAILED']) }, { additionalProperties: true })),
    counterpartyInformation: Type.Optional(Type.Object({}, { additionalProperties: true })),
    reconciliationInstructions: Type.Optional(Type.Object({ reference: Type.Optional(Type.String()), transactionHash: Type.Optional(Type.String()) }, { minProperties: 1 })),
    failureReason: Type.Optional(StringEnum(INCOMING_FAILURE_REASONS)),
  }),
);

/** An incoming transaction as the approval handshake sees it (the money area's view of it). */
export type IncomingTransactionView = Static<typeof IncomingTransaction>;

export const ApprovePaymentRequest = component(
  'ApprovePaymentRequest',
  Type.Object({ receiverCustomerInfo: Type.Optional(Type.Object({}, { additionalProperties: true })) }),
);

export const RejectPaymentRequest = component('RejectPaymentRequest', Type.Object({ reason: Type.Optional(Type.String()) }));

export const TransactionIdParams = Type.Object({ transactionId: Type.String() });
