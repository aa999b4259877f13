import { Type } from '@sinclair/typebox';
import { component, DateTime, DiscriminatedUnion, StringEnum } from '../../http/schemas.js';
import { Currency, PaymentInstructions } from '../internal-accounts/schemas.js';
import { PAYMENT_RAILS } from '../transactions/schemas.js';
import { PURPOSES_OF_PAYMENT } from '../transfers/schemas.js';

export const SCA_FACTORS = ['SMS_OTP', 'TOTP', 'PASSKEY'] as const;
export const QUOTE_STATUSES = [
  'PENDING',
  'PENDING_AUTHORIZATION',
  'PROCESSING',
  'COMPLETED',
  'FAILED',
  'EXPIRED',
] as const;

/** The largest amount in the smallest unit (the reference's lockedCurrencyAmount maximum). */
const AMOUNT_MAX = 9_000_000_000_000_000;

const AccountQuoteSource = component(
  'AccountQuoteSource',
  Type.Object({
    sourceType: StringEnum(['ACCOUNT']),
    accountId: Type.String({ minLength: 1 }),
    customerId: Type.Optional(Type.String({ minLength: 1 })),
  }),
);

const RealtimeFundingQuoteSource = component(
  'RealtimeFundingQuoteSource',
  Type.Object({
    sourceType: StringEnum(['REALTIME_FUNDING']),
    customerId: Type.Optional(Type.String({ minLength: 1 })),
    currency: Type.String({ minLength: 1 }),
    cryptoNetwork: Type.Optional(Type.String({ minLength: 1 })),
  }),
);

export const QuoteSource = component(
  'QuoteSourceOneOf',
  DiscriminatedUnion('sourceType', [Type.Ref(AccountQuoteSource), Type.Ref(RealtimeFundingQuoteSource)], {
    ACCOUNT: '#/components/schemas/AccountQuoteSource',
    REALTIME_FUNDING: '#/components/schemas/RealtimeFundingQuoteSource',
  }),
);

const AccountDestination = component(
  'AccountDestination',
  Type.Object({
    destinationType: StringEnum(['ACCOUNT']),
    accountId: Type.String({ minLength: 1 }),
    paymentRail: Type.Optional(StringEnum(PAYMENT_RAILS)),
  }),
);

const UmaAddressDestination = component(
  'UmaAddressDestination',
  Type.Object({
    destinationType: StringEnum(['UMA_ADDRESS']),
    umaAddress: Type.String({ minLength: 1 }),
    currency: Type.Optional(Type.String({ minLength: 1 })),
  }),
);

export const QuoteDestination = component(
  'QuoteDestinationOneOf',
  DiscriminatedUnion('destinationType', [Type.Ref(AccountDestination), Type.Ref(UmaAddressDestination)], {
    ACCOUNT: '#/components/schemas/AccountDestination',
    UMA_ADDRESS: '#/components/schemas/UmaAddressDestination',
  }),
);

const FixedFee = component(
  'FixedFee',
  Type.Object({ amount: Type.Integer({ format: 'int64', minimum: 0 }), currency: Type.String({ minLength: 1 }) }),
);

const PlatformFeeOverride = component(
  'PlatformFeeOverride',
  Type.Object({
    platformFixedFee: Type.Ref(FixedFee),
    platformVariableFeeBps: Type.Integer({ minimum: 0, maximum: 10000 }),
  }),
);

export const QuoteRequest = component(
  'QuoteRequest',
  Type.Object({
    lookupId: Type.Optional(Type.String({ minLength: 1 })),
    source: Type.Ref(QuoteSource),
    destination: Type.Ref(QuoteDestination),
    lockedCurrencySide: StringEnum(['SENDING', 'RECEIVING']),
    lockedCurrencyAmount: Type.Integer({ format: 'int64', exclusiveMinimum: 0, maximum: AMOUNT_MAX }),
    immediatelyExecute: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.String()),
    remittanceInformation: Type.Optional(Type.String({ maxLength: 80 })),
    purposeOfPayment: Type.Optional(StringEnum(PURPOSES_OF_PAYMENT)),
    platformFeeOverride: Type.Optional(Type.Ref(PlatformFeeOverride)),
    scaFactor: Type.Optional(StringEnum(SCA_FACTORS)),
    senderCustomerInfo: Type.Optional(Type.Object({}, { additionalProperties: true })),
  }),
);

const OutgoingRateDetails = component(
  'OutgoingRateDetails',
  Type.Object({
    counterpartyMultiplier: Type.Number({ format: 'double', exclusiveMinimum: 0 }),
    counterpartyFixedFee: Type.Integer({ format: 'int64', minimum: 0 }),
    gridApiMultiplier: Type.Number({ format: 'double', exclusiveMinimum: 0 }),
    gridApiFixedFee: Type.Integer({ format: 'int64', minimum: 0 }),
    gridApiVariableFeeRate: Type.Number({ format: 'double', minimum: 0 }),
    gridApiVariableFeeAmount: Type.Number({ format: 'int64', minimum: 0 }),
  }),
);

export const ScaChallenge = component(
  'ScaChallenge',
  Type.Object({
    id: Type.String(),
    expiresAt: DateTime,
    factor: StringEnum(SCA_FACTORS),
    availableFactors: Type.Array(StringEnum(SCA_FACTORS)),
    purpose: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    passkeyAssertionOptions: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
    passkeyAllowedOrigins: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  }),
);

export const Quote = component(
  'Quote',
  Type.Object({
    id: Type.String(),
    status: StringEnum(QUOTE_STATUSES),
    createdAt: DateTime,
    expiresAt: DateTime,
    source: Type.Ref(QuoteSource),
    destination: Type.Ref(QuoteDestination),
    sendingCurrency: Type.Ref(Currency),
    receivingCurrency: Type.Ref(Currency),
    totalSendingAmount: Type.Integer({ format: 'int64', exclusiveMinimum: 0 }),
    totalReceivingAmount: Type.Integer({ format: 'int64', exclusiveMinimum: 0 }),
    exchangeRate: Type.Number({ exclusiveMinimum: 0 }),
    feesIncluded: Type.Integer({ format: 'int64', minimum: 0 }),
    platformFeesIncluded: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
    paymentInstructions: Type.Optional(Type.Array(Type.Ref(PaymentInstructions))),
    transactionId: Type.String(),
    counterpartyInformation: Type.Optional(Type.Object({}, { additionalProperties: true })),
    rateDetails: Type.Optional(Type.Ref(OutgoingRateDetails)),
    scaChallenge: Type.Optional(Type.Ref(ScaChallenge)),
  }),
);

export const QuoteIdParams = Type.Object({ quoteId: Type.String() });

export const ExecuteQuoteRequest = component(
  'ExecuteQuoteRequest',
  Type.Object({ scaFactor: Type.Optional(StringEnum(SCA_FACTORS)) }),
);

export const ScaAuthorization = component(
  'ScaAuthorization',
  Type.Object({
    code: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    passkeyAssertion: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
    origin: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    endUserIpAddress: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }),
);

export const SandboxSendRequest = component(
  'SandboxSendRequest',
  Type.Object({
    quoteId: Type.String({ minLength: 1 }),
    currencyCode: Type.String({ minLength: 1 }),
    currencyAmount: Type.Optional(Type.Integer({ format: 'int64', exclusiveMinimum: 0, maximum: AMOUNT_MAX })),
  }),
);

// ----------------------------------------------------------------------------- exchange rates

const ExchangeRateFees = component(
  'ExchangeRateFees',
  Type.Object({
    fixed: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
    total: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
  }),
);

export const ExchangeRate = component(
  'ExchangeRate',
  Type.Object({
    sourceCurrency: Type.Ref(Currency),
    sendingAmount: Type.Integer({ format: 'int64', minimum: 0 }),
    minSendingAmount: Type.Integer({ format: 'int64', minimum: 0 }),
    maxSendingAmount: Type.Integer({ format: 'int64', minimum: 0 }),
    destinationCurrency: Type.Ref(Currency),
    destinationPaymentRail: StringEnum(PAYMENT_RAILS),
    receivingAmount: Type.Integer({ format: 'int64', minimum: 0 }),
    exchangeRate: Type.Number({ exclusiveMinimum: 0 }),
    fees: Type.Ref(ExchangeRateFees),
    updatedAt: DateTime,
  }),
);

export const ExchangeRateListResponse = component(
  'ExchangeRateListResponse',
  Type.Object({ data: Type.Array(Type.Ref(ExchangeRate)) }),
);

export const ExchangeRatesQuery = Type.Object({
  sourceCurrency: Type.Optional(Type.String({ minLength: 1 })),
  destinationCurrency: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  sendingAmount: Type.Optional(Type.Integer({ format: 'int64', minimum: 0, maximum: AMOUNT_MAX })),
});
