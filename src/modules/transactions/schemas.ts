import { Type } from '@sinclair/typebox';
import {
  component,
  DateTime,
  DiscriminatedUnion,
  NOT_EMPTY,
  PageOf,
  PageQuery,
  StringEnum,
  strictly,
} from '../../http/schemas.js';
import { CurrencyAmount } from '../internal-accounts/schemas.js';

export const TRANSACTION_STATUSES = [
  'CREATED',
  'PENDING',
  'PENDING_AUTHORIZATION',
  'PROCESSING',
  'COMPLETED',
  'REJECTED',
  'FAILED',
  'REFUNDED',
  'EXPIRED',
] as const;
export const OUTGOING_TRANSACTION_STATUSES = [
  'PENDING',
  'PENDING_AUTHORIZATION',
  'EXPIRED',
  'PROCESSING',
  'COMPLETED',
  'FAILED',
] as const;
export const TRANSACTION_TYPES = ['INCOMING', 'OUTGOING'] as const;
export const OUTGOING_FAILURE_REASONS = [
  'QUOTE_EXPIRED',
  'QUOTE_RATE_UNAVAILABLE',
  'QUOTE_EXECUTION_FAILED',
  'FUNDING_AMOUNT_MISMATCH',
  'SCA_NOT_COMPLETED',
  'PAYOUT_RETURNED',
  'LIMIT_EXCEEDED',
  'ACCOUNT_CANNOT_RECEIVE',
  'ACCOUNT_INVALID',
  'COMPLIANCE_REJECTED',
  'LIGHTNING_PAYMENT_FAILED',
  'COUNTERPARTY_POST_TX_FAILED',
] as const;
export const INCOMING_FAILURE_REASONS = [
  'LNURLP_FAILED',
  'PAY_REQUEST_FAILED',
  'PAYMENT_APPROVAL_WEBHOOK_ERROR',
  'PAYMENT_APPROVAL_TIMED_OUT',
  'OFFRAMP_FAILED',
  'MISSING_MANDATORY_PAYEE_DATA',
  'QUOTE_EXPIRED',
  'QUOTE_EXECUTION_FAILED',
  'COMPLIANCE_REJECTED',
  'COLLECTION_FAILED',
] as const;
export const PAYMENT_RAILS = [
  'ACH',
  'ACH_COLOMBIA',
  'BANK_TRANSFER',
  'BRE_B',
  'CIPS',
  'FAST',
  'FASTER_PAYMENTS',
  'FEDNOW',
  'INSTAPAY',
  'MOBILE_MONEY',
  'NEFT',
  'PAYNOW',
  'PESONET',
  'PIX',
  'RTGS',
  'RTP',
  'SEPA',
  'SEPA_INSTANT',
  'SPEI',
  'SWIFT',
  'UNIONPAY',
  'UPI',
  'WIRE',
] as const;

export const Refund = component(
  'Refund',
  Type.Object({
    reference: Type.String(),
    initiatedAt: DateTime,
    settledAt: Type.Optional(DateTime),
    status: StringEnum(['PENDING', 'COMPLETED', 'FAILED']),
    reason: Type.Optional(StringEnum(['TRANSACTION_FAILED', 'USER_CANCELLATION', 'TIMEOUT'])),
  }),
);

export const TRANSACTION_PENDING_REASONS = [
  'COUNTERPARTY_DECLARATION_REQUIRED',
  'WALLET_VERIFICATION_REQUIRED',
  'COUNTERPARTY_INFORMATION_REQUIRED',
  'COMPLIANCE_REVIEW',
] as const;

const AccountTransactionSource = component(
  'AccountTransactionSource',
  Type.Object({
    sourceType: StringEnum(['ACCOUNT']),
    accountId: Type.String(),
    currency: Type.Optional(Type.String()),
  }),
);
const UmaAddressTransactionSource = component(
  'UmaAddressTransactionSource',
  Type.Object({
    sourceType: StringEnum(['UMA_ADDRESS']),
    umaAddress: Type.String(),
    currency: Type.Optional(Type.String()),
  }),
);
const RealtimeFundingTransactionSource = component(
  'RealtimeFundingTransactionSource',
  Type.Object({
    sourceType: StringEnum(['REALTIME_FUNDING']),
    currency: Type.String(),
    customerId: Type.Optional(Type.String()),
    accountHolderName: Type.Optional(Type.String()),
    accountIdentifier: Type.Optional(Type.String()),
    bankName: Type.Optional(Type.String()),
    bankIdentifier: Type.Optional(Type.String()),
    paymentRail: Type.Optional(StringEnum(PAYMENT_RAILS)),
    remittanceInformation: Type.Optional(Type.String()),
    endToEndId: Type.Optional(Type.String()),
    traceNumber: Type.Optional(Type.String()),
  }),
);
const AccountTransactionDestination = component(
  'AccountTransactionDestination',
  Type.Object({
    destinationType: StringEnum(['ACCOUNT']),
    accountId: Type.String(),
    currency: Type.Optional(Type.String()),
  }),
);
const UmaAddressTransactionDestination = component(
  'UmaAddressTransactionDestination',
  Type.Object({
    destinationType: StringEnum(['UMA_ADDRESS']),
    umaAddress: Type.String(),
    currency: Type.Optional(Type.String()),
  }),
);
const TransactionSource = component(
  'TransactionSourceOneOf',
  DiscriminatedUnion(
    'sourceType',
    [
      Type.Ref(AccountTransactionSource),
      Type.Ref(UmaAddressTransactionSource),
      Type.Ref(RealtimeFundingTransactionSource),
    ],
    {
      ACCOUNT: '#/components/schemas/AccountTransactionSource',
      UMA_ADDRESS: '#/components/schemas/UmaAddressTransactionSource',
      REALTIME_FUNDING: '#/components/schemas/RealtimeFundingTransactionSource',
    },
  ),
);
const TransactionDestination = component(
  'TransactionDestinationOneOf',
  DiscriminatedUnion(
    'destinationType',
    [Type.Ref(AccountTransactionDestination), Type.Ref(UmaAddressTransactionDestination)],
    {
      ACCOUNT: '#/components/schemas/AccountTransactionDestination',
      UMA_ADDRESS: '#/components/schemas/UmaAddressTransactionDestination',
    },
  ),
);
const ReconciliationInstructions = component(
  'ReconciliationInstructions',
  Type.Object({ reference: Type.Optional(Type.String()) }),
);

const int64 = Type.Integer({ format: 'int64', minimum: 0 });

const common = {
  id: Type.String(),
  direction: StringEnum(['CREDIT', 'DEBIT']),
  destination: Type.Ref(TransactionDestination),
  customerId: Type.String(),
  platformCustomerId: Type.String(),
  settledAt: Type.Optional(DateTime),
  createdAt: Type.Optional(DateTime),
  updatedAt: Type.Optional(DateTime),
  receiptDeliveryConfirmedAt: Type.Optional(DateTime),
  pendingReason: Type.Optional(StringEnum(TRANSACTION_PENDING_REASONS)),
  agentId: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  exchangeRate: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  quoteId: Type.Optional(Type.String()),
  refund: Type.Optional(Type.Ref(Refund)),
  counterpartyInformation: Type.Optional(Type.Object({}, { additionalProperties: true })),
  fees: Type.Optional(int64),
  reconciliationInstructions: Type.Optional(Type.Ref(ReconciliationInstructions)),
};

export const IncomingTransaction = component(
  'IncomingTransaction',
  Type.Object({
    ...common,
    status: StringEnum(TRANSACTION_STATUSES),
    type: StringEnum(['INCOMING']),
    source: Type.Optional(Type.Ref(TransactionSource)),
    sentAmount: Type.Optional(Type.Ref(CurrencyAmount)),
    receivedAmount: Type.Ref(CurrencyAmount),
    failureReason: Type.Optional(StringEnum(INCOMING_FAILURE_REASONS)),
  }),
);

export const OutgoingTransaction = component(
  'OutgoingTransaction',
  Type.Object({
    ...common,
    status: StringEnum(OUTGOING_TRANSACTION_STATUSES),
    type: StringEnum(['OUTGOING']),
    source: Type.Ref(TransactionSource),
    sentAmount: Type.Ref(CurrencyAmount),
    receivedAmount: Type.Optional(Type.Ref(CurrencyAmount)),
    platformFees: Type.Optional(int64),
    failureReason: Type.Optional(StringEnum(OUTGOING_FAILURE_REASONS)),
    paymentRail: Type.Union([StringEnum(PAYMENT_RAILS), Type.Null()]),
    railSelectionMode: Type.Union([StringEnum(['AUTO', 'MANUAL']), Type.Null()]),
  }),
);

export const CARD_TRANSACTION_STATUSES = [
  'AUTHORIZED',
  'PARTIALLY_SETTLED',
  'SETTLED',
  'REFUNDED',
  'EXCEPTION',
] as const;
export type CardTransactionStatus = (typeof CARD_TRANSACTION_STATUSES)[number];

export const CardMerchant = component(
  'CardMerchant',
  Type.Object({
    // The reference sets no format on these (an MCC is four digits, a country two letters,
    // by its descriptions); only lengths are bounded, as for every stored text.
    descriptor: strictly(Type.String({ maxLength: 1000 }), NOT_EMPTY),
    mcc: Type.Optional(Type.String({ maxLength: 1000 })),
    country: Type.Optional(Type.String({ maxLength: 1000 })),
  }),
);

const count = Type.Integer({ minimum: 0 });
export const CardPullSummary = component(
  'CardPullSummary',
  Type.Object({ count, totalAmount: int64, pendingCount: Type.Optional(count) }),
);
export const CardRefundSummary = component('CardRefundSummary', Type.Object({ count, totalAmount: int64 }));
export const CardSettlementSummary = component('CardSettlementSummary', Type.Object({ count, totalAmount: int64 }));

export const CardTransaction = component(
  'CardTransaction',
  Type.Object({
    type: StringEnum(['CARD']),
    id: Type.String(),
    cardId: Type.Optional(Type.String()),
    customerId: Type.String(),
    platformCustomerId: Type.String(),
    issuerTransactionToken: Type.Optional(Type.String()),
    status: StringEnum(CARD_TRANSACTION_STATUSES),
    direction: StringEnum(['CREDIT', 'DEBIT']),
    merchant: Type.Ref(CardMerchant),
    authorizedAmount: Type.Ref(CurrencyAmount),
    settledAmount: Type.Optional(Type.Ref(CurrencyAmount)),
    refundedAmount: Type.Optional(Type.Ref(CurrencyAmount)),
    accountId: Type.String(),
    pullSummary: Type.Optional(Type.Ref(CardPullSummary)),
    refundSummary: Type.Optional(Type.Ref(CardRefundSummary)),
    settlementSummary: Type.Optional(Type.Ref(CardSettlementSummary)),
    authorizedAt: DateTime,
    lastEventAt: Type.Optional(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const TransactionOneOf = component(
  'TransactionOneOf',
  DiscriminatedUnion(
    'type',
    [Type.Ref(IncomingTransaction), Type.Ref(OutgoingTransaction), Type.Ref(CardTransaction)],
    {
      INCOMING: '#/components/schemas/IncomingTransaction',
      OUTGOING: '#/components/schemas/OutgoingTransaction',
      CARD: '#/components/schemas/CardTransaction',
    },
  ),
);

export const TransactionList = PageOf('TransactionListResponse', Type.Ref(TransactionOneOf));

export const TransactionListQuery = Type.Object({
  customerId: Type.Optional(Type.String()),
  platformCustomerId: Type.Optional(Type.String()),
  accountIdentifier: Type.Optional(Type.String()),
  senderAccountIdentifier: Type.Optional(Type.String()),
  receiverAccountIdentifier: Type.Optional(Type.String()),
  status: Type.Optional(StringEnum(TRANSACTION_STATUSES)),
  type: Type.Optional(StringEnum(TRANSACTION_TYPES)),
  reference: Type.Optional(Type.String()),
  startDate: Type.Optional(DateTime),
  endDate: Type.Optional(DateTime),
  ...PageQuery,
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'], { default: 'desc' })),
});

export const TransactionIdParams = Type.Object({ transactionId: Type.String() });

export const ConfirmReceiptDeliveryRequest = component(
  'ConfirmReceiptDeliveryRequest',
  Type.Object({ receiptDeliveryConfirmedAt: Type.Optional(DateTime) }),
);

export const CancelTransactionRequest = component(
  'CancelTransactionRequest',
  Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1000 })) }),
);
