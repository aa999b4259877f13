import { Type, type Static } from '@sinclair/typebox';
import { component, DateTime, StringEnum } from '../../http/schemas.js';
import {
  INCOMING_FAILURE_REASONS,
  TRANSACTION_PENDING_REASONS,
  TRANSACTION_STATUSES,
} from '../transactions/schemas.js';

const Amount = Type.Object({
  amount: Type.Integer(),
  currency: Type.Object({
    code: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    symbol: Type.Optional(Type.String()),
    decimals: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
});

// The TypeScript view of an incoming transaction as the handshake handles it; the wire
// schema is the transactions area's IncomingTransaction.
const IncomingTransactionShape = Type.Object({
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
  refund: Type.Optional(
    Type.Object(
      { reference: Type.String(), initiatedAt: DateTime, status: StringEnum(['PENDING', 'COMPLETED', 'FAILED']) },
      { additionalProperties: true },
    ),
  ),
  counterpartyInformation: Type.Optional(Type.Object({}, { additionalProperties: true })),
  reconciliationInstructions: Type.Optional(
    Type.Object(
      { reference: Type.Optional(Type.String()), transactionHash: Type.Optional(Type.String()) },
      { minProperties: 1 },
    ),
  ),
  failureReason: Type.Optional(StringEnum(INCOMING_FAILURE_REASONS)),
});

/** An incoming transaction as the approval handshake sees it (the money area's view of it). */
export type IncomingTransactionView = Static<typeof IncomingTransactionShape>;
export { IncomingTransaction } from '../transactions/schemas.js';

export const ApprovePaymentRequest = component(
  'ApprovePaymentRequest',
  Type.Object({ receiverCustomerInfo: Type.Optional(Type.Object({}, { additionalProperties: true })) }),
);

export const RejectPaymentRequest = component(
  'RejectPaymentRequest',
  Type.Object({ reason: Type.Optional(Type.String()) }),
);

export { TransactionIdParams } from '../transactions/schemas.js';
