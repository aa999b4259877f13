import { Type } from '@sinclair/typebox';
import { component, DateTime, DiscriminatedUnion, PageOf, PageQuery, StringEnum } from '../../http/schemas.js';

export const INTERNAL_ACCOUNT_TYPES = ['INTERNAL_FIAT', 'INTERNAL_CRYPTO', 'EMBEDDED_WALLET'] as const;
export const INTERNAL_ACCOUNT_STATUSES = ['PENDING', 'ACTIVE', 'CLOSED', 'FROZEN', 'FAILED'] as const;
export type InternalAccountType = (typeof INTERNAL_ACCOUNT_TYPES)[number];

export const Currency = component(
  'Currency',
  Type.Object({
    code: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    symbol: Type.Optional(Type.String()),
    decimals: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
);

export const CurrencyAmount = component(
  'CurrencyAmount',
  Type.Object({ amount: Type.Integer({ format: 'int64' }), currency: Type.Ref(Currency) }),
);

// Funding instructions: the coordinates railyard gives each internal account, one shape per
// kind of account it hands out (see service.ts).
const reference = Type.String();
const PaymentUsdAccountInfo = component(
  'PaymentUsdAccountInfo',
  Type.Object({
    accountType: StringEnum(['USD_ACCOUNT']),
    accountNumber: Type.String({ minLength: 1, maxLength: 34 }),
    routingNumber: Type.String({ pattern: '^[0-9]{9}$' }),
    bankName: Type.Optional(Type.String()),
    paymentRails: Type.Array(StringEnum(['ACH', 'WIRE', 'RTP', 'FEDNOW'])),
    reference,
  }),
);
const PaymentEurAccountInfo = component(
  'PaymentEurAccountInfo',
  Type.Object({
    accountType: StringEnum(['EUR_ACCOUNT']),
    iban: Type.String(),
    swiftCode: Type.Optional(Type.String()),
    paymentRails: Type.Array(StringEnum(['SEPA', 'SEPA_INSTANT'])),
    reference,
  }),
);
const PaymentGbpAccountInfo = component(
  'PaymentGbpAccountInfo',
  Type.Object({
    accountType: StringEnum(['GBP_ACCOUNT']),
    sortCode: Type.String({ pattern: '^[0-9]{6}$' }),
    accountNumber: Type.String({ pattern: '^[0-9]{8}$' }),
    paymentRails: Type.Array(StringEnum(['FASTER_PAYMENTS'])),
    reference,
  }),
);
const PaymentMxnAccountInfo = component(
  'PaymentMxnAccountInfo',
  Type.Object({
    accountType: StringEnum(['MXN_ACCOUNT']),
    clabeNumber: Type.String({ pattern: '^[0-9]{18}$' }),
    paymentRails: Type.Array(StringEnum(['SPEI'])),
    reference,
  }),
);
const PaymentSwiftAccountInfo = component(
  'PaymentSwiftAccountInfo',
  Type.Object({
    accountType: StringEnum(['SWIFT_ACCOUNT']),
    country: Type.String({ pattern: '^[A-Z]{2}$' }),
    swiftCode: Type.String(),
    bankName: Type.String(),
    accountNumber: Type.String(),
    accountHolderName: Type.String(),
    paymentRails: Type.Array(StringEnum(['SWIFT'])),
    reference: Type.Optional(reference),
  }),
);
const wallet = (name: string, accountType: string, assets: string[], assetRequired = false) =>
  component(
    name,
    Type.Object({
      accountType: StringEnum([accountType]),
      address: Type.String(),
      assetType: assetRequired ? Type.String() : Type.Optional(StringEnum(assets)),
    }),
  );
const PaymentSolanaWalletInfo = wallet('PaymentSolanaWalletInfo', 'SOLANA_WALLET', ['USDC', 'USDT']);
const PaymentTronWalletInfo = wallet('PaymentTronWalletInfo', 'TRON_WALLET', ['USDT']);
const PaymentSparkWalletInfo = wallet('PaymentSparkWalletInfo', 'SPARK_WALLET', [], true);
const PaymentBaseWalletInfo = wallet('PaymentBaseWalletInfo', 'BASE_WALLET', ['USDC']);
const PaymentPolygonWalletInfo = wallet('PaymentPolygonWalletInfo', 'POLYGON_WALLET', ['USDC']);
const PaymentEthereumWalletInfo = wallet('PaymentEthereumWalletInfo', 'ETHEREUM_WALLET', ['USDC', 'USDT']);
const PaymentPlasmaWalletInfo = wallet('PaymentPlasmaWalletInfo', 'PLASMA_WALLET', ['USDT']);
const PaymentLightningInvoiceInfo = component(
  'PaymentLightningInvoiceInfo',
  Type.Object({ accountType: StringEnum(['LIGHTNING']), invoice: Type.String() }),
);
const PaymentBitcoinDepositAddressInfo = component(
  'PaymentBitcoinDepositAddressInfo',
  Type.Object({
    accountType: StringEnum(['BITCOIN_L1']),
    address: Type.String(),
    network: Type.Optional(StringEnum(['BITCOIN'])),
  }),
);

export const PaymentEmbeddedWalletInfo = component(
  'PaymentEmbeddedWalletInfo',
  Type.Object({
    accountType: StringEnum(['EMBEDDED_WALLET']),
    payloadToSign: Type.String(),
  }),
);

const variants = {
  USD_ACCOUNT: PaymentUsdAccountInfo,
  EUR_ACCOUNT: PaymentEurAccountInfo,
  GBP_ACCOUNT: PaymentGbpAccountInfo,
  MXN_ACCOUNT: PaymentMxnAccountInfo,
  SWIFT_ACCOUNT: PaymentSwiftAccountInfo,
  SOLANA_WALLET: PaymentSolanaWalletInfo,
  TRON_WALLET: PaymentTronWalletInfo,
  SPARK_WALLET: PaymentSparkWalletInfo,
  BASE_WALLET: PaymentBaseWalletInfo,
  POLYGON_WALLET: PaymentPolygonWalletInfo,
  ETHEREUM_WALLET: PaymentEthereumWalletInfo,
  PLASMA_WALLET: PaymentPlasmaWalletInfo,
  LIGHTNING: PaymentLightningInvoiceInfo,
  BITCOIN_L1: PaymentBitcoinDepositAddressInfo,
  EMBEDDED_WALLET: PaymentEmbeddedWalletInfo,
};

export const PaymentInstructions = component(
  'PaymentInstructions',
  Type.Object({
    instructionsNotes: Type.Optional(Type.String()),
    isPlatformAccount: Type.Optional(Type.Boolean()),
    accountOrWalletInfo: DiscriminatedUnion(
      'accountType',
      Object.values(variants).map((v) => Type.Ref(v)),
      Object.fromEntries(
        Object.entries(variants).map(([type, schema]) => [type, `#/components/schemas/${schema.$id}`]),
      ),
    ),
  }),
);

export const InternalAccount = component(
  'InternalAccount',
  Type.Object({
    id: Type.String(),
    customerId: Type.Optional(Type.String()),
    type: StringEnum(INTERNAL_ACCOUNT_TYPES),
    status: StringEnum(INTERNAL_ACCOUNT_STATUSES),
    balance: Type.Ref(CurrencyAmount),
    totalBalance: Type.Ref(CurrencyAmount),
    fundingPaymentInstructions: Type.Array(Type.Ref(PaymentInstructions)),
    privateEnabled: Type.Optional(Type.Boolean()),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const InternalAccountList = PageOf('InternalAccountListResponse', Type.Ref(InternalAccount));
export const PlatformInternalAccountList = component(
  'PlatformInternalAccountListResponse',
  Type.Object({ data: Type.Array(Type.Ref(InternalAccount)) }),
);

const TypeFilter = Type.Optional(StringEnum(INTERNAL_ACCOUNT_TYPES));

export const CustomerInternalAccountListQuery = Type.Object({
  currency: Type.Optional(Type.String()),
  customerId: Type.Optional(Type.String()),
  type: TypeFilter,
  ...PageQuery,
});

export const PlatformInternalAccountListQuery = Type.Object({
  currency: Type.Optional(Type.String()),
  type: TypeFilter,
});

/** The reference's maximum for one sandbox deposit. */
export const SANDBOX_FUND_AMOUNT_MAX = 100_000_000_000;

export const SandboxFundRequest = component(
  'SandboxFundRequest',
  Type.Object({ amount: Type.Integer({ format: 'int64', exclusiveMinimum: 0, maximum: SANDBOX_FUND_AMOUNT_MAX }) }),
);

export const AccountIdParams = Type.Object({ accountId: Type.String() });
