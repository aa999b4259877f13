import { Type } from '@sinclair/typebox';
import { SETTLEMENT_TIMINGS } from '../../config.js';
import { component, DateTime, StringEnum } from '../../http/schemas.js';

export const CUSTOMER_INFO_FIELD_NAMES = [
  'FULL_NAME',
  'BIRTH_DATE',
  'NATIONALITY',
  'PHONE_NUMBER',
  'EMAIL',
  'POSTAL_ADDRESS',
  'TAX_ID',
  'REGISTRATION_NUMBER',
  'USER_TYPE',
  'COUNTRY_OF_RESIDENCE',
  'ACCOUNT_IDENTIFIER',
  'FI_LEGAL_ENTITY_NAME',
  'FI_ADDRESS',
  'PURPOSE_OF_PAYMENT',
  'ULTIMATE_INSTITUTION_COUNTRY',
  'IDENTIFIER',
  'BUSINESS_TYPE',
  'COMPANY_LEGAL_NAME',
  'ID_TYPE',
  'ID_NUMBER',
] as const;

export const TRANSACTION_TYPES = ['INCOMING', 'OUTGOING'] as const;

const int64NonNegative = Type.Integer({ format: 'int64', minimum: 0 });

export const CounterpartyFieldDefinition = component(
  'CounterpartyFieldDefinition',
  Type.Object({ name: StringEnum(CUSTOMER_INFO_FIELD_NAMES), mandatory: Type.Boolean() }),
);

export const PlatformCurrencyConfig = component(
  'PlatformCurrencyConfig',
  Type.Object({
    currencyCode: Type.String({ minLength: 1 }),
    minAmount: int64NonNegative,
    maxAmount: int64NonNegative,
    requiredCounterpartyFields: Type.Array(Type.Ref(CounterpartyFieldDefinition)),
    providerRequiredCustomerFields: Type.Optional(
      Type.Array(StringEnum(CUSTOMER_INFO_FIELD_NAMES), { readOnly: true }),
    ),
    providerRequiredCounterpartyCustomerFields: Type.Optional(
      Type.Array(StringEnum(CUSTOMER_INFO_FIELD_NAMES), { readOnly: true }),
    ),
    enabledTransactionTypes: Type.Array(StringEnum(TRANSACTION_TYPES)),
  }),
);

export const EmbeddedWalletConfig = component(
  'EmbeddedWalletConfig',
  Type.Object({
    appName: Type.Optional(Type.String({ maxLength: 255 })),
    otpLength: Type.Optional(Type.Integer({ minimum: 4, maximum: 12 })),
    alphanumeric: Type.Optional(Type.Boolean()),
    expirationSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
    sendFromEmailAddress: Type.Optional(Type.String({ format: 'email', maxLength: 255 })),
    sendFromEmailSenderName: Type.Optional(Type.String({ maxLength: 255 })),
    replyToEmailAddress: Type.Optional(Type.String({ format: 'email', maxLength: 255 })),
    logoUrl: Type.Optional(Type.String({ format: 'uri', maxLength: 512 })),
  }),
);

export const CardTokenization2FAConfig = component(
  'CardTokenization2FAConfig',
  Type.Object({
    displayName: Type.Optional(Type.String({ maxLength: 255 })),
    logoUrl: Type.Optional(Type.String({ format: 'uri', pattern: '^https://', maxLength: 512 })),
    email: Type.Optional(
      Type.Object({
        fromAddress: Type.Optional(Type.String({ format: 'email', maxLength: 255 })),
        fromName: Type.Optional(Type.String({ maxLength: 255 })),
        replyToAddress: Type.Optional(Type.String({ format: 'email', maxLength: 255 })),
        subject: Type.Optional(Type.String({ maxLength: 255 })),
        bodyText: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
    ),
    sms: Type.Optional(
      Type.Object({
        templateSid: Type.Optional(Type.String({ maxLength: 64 })),
        bodyText: Type.Optional(Type.String({ maxLength: 480 })),
      }),
    ),
  }),
);

export const FeeConfig = component(
  'FeeConfig',
  Type.Object({
    feeType: StringEnum(['CROSS_CURRENCY_TRANSACTION']),
    sourceCurrency: Type.String({ minLength: 1 }),
    variableFeeBps: Type.Integer({ minimum: 0, maximum: 10000 }),
    fixedFee: Type.Object({ amount: int64NonNegative, currency: Type.String({ minLength: 1 }) }),
  }),
);

const configFields = {
  umaDomain: Type.Optional(Type.String({ minLength: 1 })),
  webhookEndpoint: Type.Optional(Type.String()),
  supportedCurrencies: Type.Optional(Type.Array(Type.Ref(PlatformCurrencyConfig))),
  embeddedWalletConfig: Type.Optional(Type.Ref(EmbeddedWalletConfig)),
  cardTokenization2faConfig: Type.Optional(Type.Ref(CardTokenization2FAConfig)),
  feeConfigs: Type.Optional(Type.Array(Type.Ref(FeeConfig))),
};

export const PlatformConfig = component(
  'PlatformConfig',
  Type.Object({
    id: Type.Optional(Type.String({ readOnly: true })),
    ...configFields,
    proxyUmaSubdomain: Type.Optional(Type.String()),
    isRegulatedFinancialInstitution: Type.Optional(Type.Boolean()),
    createdAt: Type.Optional(DateTime),
    updatedAt: Type.Optional(DateTime),
  }),
);

export const PlatformConfigUpdateRequest = component('PlatformConfigUpdateRequest', Type.Object(configFields));

/** Railyard's own view of a platform (outside the Grid namespace). */
export const RailyardPlatform = Type.Object({
  id: Type.String(),
  name: Type.String(),
  counterpartyRules: Type.Boolean(),
  invitations: Type.Boolean(),
  strictIdentifiers: Type.Boolean(),
  /** How its outgoing bank payouts settle (docs/hosted-differences.md). */
  settlementTiming: StringEnum(SETTLEMENT_TIMINGS),
  clock: Type.Object({ now: DateTime, offsetSeconds: Type.Number() }),
  webhookPublicKey: Type.String(),
  createdAt: DateTime,
});

export const RailyardPlatformUpdate = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  counterpartyRules: Type.Optional(Type.Boolean()),
  invitations: Type.Optional(Type.Boolean()),
  strictIdentifiers: Type.Optional(Type.Boolean()),
  settlementTiming: Type.Optional(StringEnum(SETTLEMENT_TIMINGS)),
});
