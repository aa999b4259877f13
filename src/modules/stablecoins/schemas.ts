import { Type } from '@sinclair/typebox';
import { component, DateTime, DiscriminatedUnion, PageOf, PageQuery, StringEnum } from '../../http/schemas.js';

export const ISSUANCE_STATUSES = ['PENDING_REVIEW', 'PROVISIONING', 'PROVISIONED', 'REJECTED', 'FAILED'] as const;
export const GRID_OPERATIONS_STATUSES = ['NOT_ENABLED', 'PENDING_APPROVAL', 'ENABLING', 'ENABLED', 'DISABLED'] as const;
export const PROVIDERS = ['BRALE'] as const;
export const LINK_STATUSES = ['ACTIVE', 'INVALID', 'REVOKED'] as const;
export const OPERATION_TYPES = ['MINT', 'BURN'] as const;
export const OPERATION_STATUSES = [
  'CREATED',
  'PENDING_FUNDING',
  'PENDING_PROVIDER',
  'PROCESSING',
  'COMPLETED',
  'FAILED',
  'EXPIRED',
] as const;
export const PAYOUT_RAILS = ['WIRE', 'ACH_CREDIT', 'SAME_DAY_ACH_CREDIT', 'RTP_CREDIT'] as const;

export type OperationStatus = (typeof OPERATION_STATUSES)[number];
export type PayoutRail = (typeof PAYOUT_RAILS)[number];

export const StablecoinIssuanceStatus = component('StablecoinIssuanceStatus', StringEnum(ISSUANCE_STATUSES));
export const StablecoinGridOperationsStatus = component(
  'StablecoinGridOperationsStatus',
  StringEnum(GRID_OPERATIONS_STATUSES),
);
export const StablecoinProvider = component('StablecoinProvider', StringEnum(PROVIDERS));
export const StablecoinNetwork = component('StablecoinNetwork', StringEnum(['SPARK']));
export const StablecoinProviderEnvironment = component(
  'StablecoinProviderEnvironment',
  StringEnum(['SANDBOX', 'PRODUCTION']),
);
export const StablecoinProviderAccountStatus = component('StablecoinProviderAccountStatus', StringEnum(LINK_STATUSES));
export const StablecoinOperationType = component('StablecoinOperationType', StringEnum(OPERATION_TYPES));
export const StablecoinOperationStatus = component('StablecoinOperationStatus', StringEnum(OPERATION_STATUSES));

// ------------------------------------------------------------------------------- provider accounts

export const StablecoinProviderAccount = component(
  'StablecoinProviderAccount',
  Type.Object({
    id: Type.String(),
    provider: Type.Ref(StablecoinProvider),
    providerAccountId: Type.String(),
    providerEnvironment: Type.Ref(StablecoinProviderEnvironment),
    status: Type.Ref(StablecoinProviderAccountStatus),
    lastVerifiedAt: Type.Optional(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const StablecoinProviderAccountListResponse = PageOf(
  'StablecoinProviderAccountListResponse',
  Type.Ref(StablecoinProviderAccount),
);

export const StablecoinProviderAccountLinkRequest = component(
  'StablecoinProviderAccountLinkRequest',
  Type.Object({
    provider: Type.Ref(StablecoinProvider),
    apiClientId: Type.String({ minLength: 1, maxLength: 255 }),
    apiClientSecret: Type.String({ minLength: 1, maxLength: 1024, writeOnly: true }),
    providerAccountId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  }),
);
export interface LinkInput {
  provider: 'BRALE';
  apiClientId: string;
  apiClientSecret: string;
  providerAccountId?: string | undefined;
}

export const ProviderAccountListQuery = Type.Object({
  provider: Type.Optional(StringEnum(PROVIDERS)),
  status: Type.Optional(StringEnum(LINK_STATUSES)),
  ...PageQuery,
});

export const ProviderAccountIdParams = Type.Object({ stablecoinProviderAccountId: Type.String() });

// ------------------------------------------------------------------------------- stablecoins

export const Stablecoin = component(
  'Stablecoin',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    symbol: Type.String(),
    baseCurrency: Type.String(),
    network: Type.Ref(StablecoinNetwork),
    decimals: Type.Integer(),
    issuanceStatus: Type.Ref(StablecoinIssuanceStatus),
    gridOperationsStatus: Type.Ref(StablecoinGridOperationsStatus),
    networkTokenIdentifier: Type.String(),
    currency: Type.Optional(Type.String()),
    provider: Type.Ref(StablecoinProvider),
    stablecoinProviderAccountId: Type.String(),
    providerEnvironment: Type.Ref(StablecoinProviderEnvironment),
    providerTokenIdentifier: Type.String(),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const StablecoinListResponse = PageOf('StablecoinListResponse', Type.Ref(Stablecoin));

export const StablecoinRegisterRequest = component(
  'StablecoinRegisterRequest',
  Type.Object({
    providerTokenIdentifier: Type.String({ minLength: 1, maxLength: 64 }),
    networkTokenIdentifier: Type.String({ minLength: 1, maxLength: 255 }),
    network: Type.Ref(StablecoinNetwork),
    stablecoinProviderAccountId: Type.Optional(Type.String({ minLength: 1 })),
  }),
);
export interface RegisterInput {
  providerTokenIdentifier: string;
  networkTokenIdentifier: string;
  network: 'SPARK';
  stablecoinProviderAccountId?: string | undefined;
}

export const StablecoinListQuery = Type.Object({
  issuanceStatus: Type.Optional(StringEnum(ISSUANCE_STATUSES)),
  gridOperationsStatus: Type.Optional(StringEnum(GRID_OPERATIONS_STATUSES)),
  provider: Type.Optional(StringEnum(PROVIDERS)),
  ...PageQuery,
});

export const StablecoinIdParams = Type.Object({ stablecoinId: Type.String() });

// ------------------------------------------------------------------------------- operations

const Units = Type.String({ pattern: '^[0-9]+$' });
const Description = Type.Optional(Type.String({ maxLength: 1024 }));

export const StablecoinWireFundingSource = component(
  'StablecoinWireFundingSource',
  Type.Object({ type: StringEnum(['WIRE']) }),
);
export const StablecoinAchDebitFundingSource = component(
  'StablecoinAchDebitFundingSource',
  Type.Object({ type: StringEnum(['ACH_DEBIT']), externalAccountId: Type.String({ minLength: 1 }) }),
);
export const StablecoinSameDayAchDebitFundingSource = component(
  'StablecoinSameDayAchDebitFundingSource',
  Type.Object({ type: StringEnum(['SAME_DAY_ACH_DEBIT']), externalAccountId: Type.String({ minLength: 1 }) }),
);
export const StablecoinGridInternalFundingSource = component(
  'StablecoinGridInternalFundingSource',
  Type.Object({ type: StringEnum(['GRID_INTERNAL_ACCOUNT']), accountId: Type.String({ minLength: 1 }) }),
);
export const StablecoinProviderBalanceFundingSource = component(
  'StablecoinProviderBalanceFundingSource',
  Type.Object({
    type: StringEnum(['PROVIDER_INTERNAL_BALANCE']),
    sourceTokenIdentifier: Type.String({ minLength: 1 }),
    cryptoNetwork: Type.String({ minLength: 1 }),
  }),
);

const ref = (name: string) => `#/components/schemas/${name}`;

export const StablecoinMintFundingSource = component(
  'StablecoinMintFundingSource',
  DiscriminatedUnion(
    'type',
    [
      Type.Ref(StablecoinWireFundingSource),
      Type.Ref(StablecoinAchDebitFundingSource),
      Type.Ref(StablecoinSameDayAchDebitFundingSource),
      Type.Ref(StablecoinGridInternalFundingSource),
      Type.Ref(StablecoinProviderBalanceFundingSource),
    ],
    {
      WIRE: ref('StablecoinWireFundingSource'),
      ACH_DEBIT: ref('StablecoinAchDebitFundingSource'),
      SAME_DAY_ACH_DEBIT: ref('StablecoinSameDayAchDebitFundingSource'),
      GRID_INTERNAL_ACCOUNT: ref('StablecoinGridInternalFundingSource'),
      PROVIDER_INTERNAL_BALANCE: ref('StablecoinProviderBalanceFundingSource'),
    },
  ),
);

export const StablecoinMintDestination = component(
  'StablecoinMintDestination',
  Type.Object({ accountId: Type.String({ minLength: 1 }) }),
);

export const StablecoinMintRequest = component(
  'StablecoinMintRequest',
  Type.Object({
    amount: Units,
    fundingSource: Type.Ref(StablecoinMintFundingSource),
    destination: Type.Ref(StablecoinMintDestination),
    description: Description,
  }),
);

export type MintFundingSource =
  | { type: 'WIRE' }
  | { type: 'ACH_DEBIT' | 'SAME_DAY_ACH_DEBIT'; externalAccountId: string }
  | { type: 'GRID_INTERNAL_ACCOUNT'; accountId: string }
  | { type: 'PROVIDER_INTERNAL_BALANCE'; sourceTokenIdentifier: string; cryptoNetwork: string };

export interface MintInput {
  amount: string;
  fundingSource: MintFundingSource;
  destination: { accountId: string };
  description?: string | undefined;
}

export const StablecoinExternalAccountBurnSource = component(
  'StablecoinExternalAccountBurnSource',
  Type.Object({ type: StringEnum(['EXTERNAL_ACCOUNT']) }),
);
export const StablecoinGridInternalBurnSource = component(
  'StablecoinGridInternalBurnSource',
  Type.Object({ type: StringEnum(['GRID_INTERNAL_ACCOUNT']), accountId: Type.String({ minLength: 1 }) }),
);
export const StablecoinProviderBalanceBurnSource = component(
  'StablecoinProviderBalanceBurnSource',
  Type.Object({ type: StringEnum(['PROVIDER_INTERNAL_BALANCE']) }),
);

export const StablecoinBurnSource = component(
  'StablecoinBurnSource',
  DiscriminatedUnion(
    'type',
    [
      Type.Ref(StablecoinExternalAccountBurnSource),
      Type.Ref(StablecoinGridInternalBurnSource),
      Type.Ref(StablecoinProviderBalanceBurnSource),
    ],
    {
      EXTERNAL_ACCOUNT: ref('StablecoinExternalAccountBurnSource'),
      GRID_INTERNAL_ACCOUNT: ref('StablecoinGridInternalBurnSource'),
      PROVIDER_INTERNAL_BALANCE: ref('StablecoinProviderBalanceBurnSource'),
    },
  ),
);

export const StablecoinBurnDestination = component(
  'StablecoinBurnDestination',
  Type.Object({
    type: StringEnum(['EXTERNAL_ACCOUNT']),
    externalAccountId: Type.String({ minLength: 1 }),
    rail: StringEnum(PAYOUT_RAILS),
  }),
);

export const StablecoinBurnRequest = component(
  'StablecoinBurnRequest',
  Type.Object({
    amount: Units,
    source: Type.Ref(StablecoinBurnSource),
    destination: Type.Ref(StablecoinBurnDestination),
    description: Description,
  }),
);

export type BurnSource =
  | { type: 'EXTERNAL_ACCOUNT' }
  | { type: 'GRID_INTERNAL_ACCOUNT'; accountId: string }
  | { type: 'PROVIDER_INTERNAL_BALANCE' };

export interface BurnInput {
  amount: string;
  source: BurnSource;
  destination: { type: 'EXTERNAL_ACCOUNT'; externalAccountId: string; rail: PayoutRail };
  description?: string | undefined;
}

export const StablecoinOperationSource = component(
  'StablecoinOperationSource',
  Type.Object({
    type: StringEnum([
      'WIRE',
      'ACH_DEBIT',
      'SAME_DAY_ACH_DEBIT',
      'EXTERNAL_ACCOUNT',
      'GRID_INTERNAL_ACCOUNT',
      'PROVIDER_INTERNAL_BALANCE',
    ]),
    externalAccountId: Type.Optional(Type.String()),
    accountId: Type.Optional(Type.String()),
    sourceTokenIdentifier: Type.Optional(Type.String()),
    cryptoNetwork: Type.Optional(Type.String()),
  }),
);

export const StablecoinFundingInstructions = component(
  'StablecoinFundingInstructions',
  Type.Object(
    {
      rail: Type.Optional(Type.String()),
      network: Type.Optional(Type.String()),
      address: Type.Optional(Type.String()),
      valueType: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  ),
);

export const StablecoinOperationDestination = component(
  'StablecoinOperationDestination',
  Type.Object({ accountId: Type.String(), rail: Type.Optional(StringEnum(PAYOUT_RAILS)) }),
);

export const StablecoinEstimatedDelivery = component(
  'StablecoinEstimatedDelivery',
  Type.Object(
    {
      rail: Type.Optional(Type.String()),
      amount: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
      currency: Type.Optional(Type.String()),
      timing: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  ),
);

export const StablecoinOperation = component(
  'StablecoinOperation',
  Type.Object({
    id: Type.String(),
    stablecoinId: Type.String(),
    operationType: Type.Ref(StablecoinOperationType),
    status: Type.Ref(StablecoinOperationStatus),
    amount: Type.String(),
    provider: Type.Ref(StablecoinProvider),
    providerEnvironment: Type.Ref(StablecoinProviderEnvironment),
    stablecoinProviderAccountId: Type.String(),
    source: Type.Optional(Type.Ref(StablecoinOperationSource)),
    fundingInstructions: Type.Optional(Type.Ref(StablecoinFundingInstructions)),
    destination: Type.Optional(Type.Ref(StablecoinOperationDestination)),
    estimatedDelivery: Type.Optional(Type.Ref(StablecoinEstimatedDelivery)),
    expiresAt: Type.Optional(DateTime),
    providerStatus: Type.Optional(Type.String()),
    failureReason: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const StablecoinOperationListResponse = PageOf('StablecoinOperationListResponse', Type.Ref(StablecoinOperation));

export const OperationListQuery = Type.Object({
  operationType: Type.Optional(StringEnum(OPERATION_TYPES)),
  ...PageQuery,
});

export const OperationIdParams = Type.Object({ stablecoinOperationId: Type.String() });

/** The Idempotency-Key these four operations require (names are lower-case here). */
export const RequiredIdempotencyHeaders = Type.Object({
  'idempotency-key': Type.String({ minLength: 1, maxLength: 255 }),
});
