import { Type, type TSchema } from '@sinclair/typebox';
import {
  component,
  DateTime,
  DiscriminatedUnion,
  PageOf,
  PageQuery,
  COUNTRY_SHAPE,
  NOT_EMPTY,
  StringEnum,
  strictly,
} from '../../http/schemas.js';
import { ACCOUNT_TYPES, type AccountTypeDef, type FieldDef } from './account-types.js';
import './formats.js';

// Schemas generated from the account-type table, named as the reference names them.

export const EXTERNAL_ACCOUNT_STATUSES = [
  'PENDING',
  'ACTIVE',
  'PENDING_OWNERSHIP_VERIFICATION',
  'UNVERIFIED',
  'UNDER_REVIEW',
  'INACTIVE',
] as const;
export const BENEFICIARY_VERIFICATION_STATUSES = [
  'MATCHED',
  'PARTIAL_MATCH',
  'NOT_MATCHED',
  'UNSUPPORTED',
  'CHECKED_BY_RECEIVING_FI',
  'PENDING',
] as const;
export const OWNERSHIP_TYPES = ['FIRST_PARTY', 'THIRD_PARTY'] as const;

// The reference describes Address.country as an ISO 3166-1 alpha-2 code.
const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', minLength: 2, maxLength: 2 });

export const Address = component(
  'Address',
  Type.Object({
    line1: strictly(Type.String(), NOT_EMPTY),
    line2: Type.Optional(Type.String()),
    city: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    postalCode: strictly(Type.String(), NOT_EMPTY),
    country: CountryCode,
  }),
);

function fieldSchema(def: FieldDef): TSchema {
  const options: Record<string, unknown> = {};
  for (const key of ['pattern', 'minLength', 'maxLength', 'format'] as const)
    if (def[key] !== undefined) options[key] = def[key];
  const schema = def.enum ? StringEnum(def.enum, options) : Type.String(options);
  return def.strict ? strictly(schema, def.strict) : schema;
}

function objectOf(
  fields: Record<string, FieldDef>,
  fixed: Record<string, TSchema>,
  required: readonly string[],
): TSchema {
  const properties: Record<string, TSchema> = { ...fixed };
  for (const [name, def] of Object.entries(fields)) properties[name] = fieldSchema(def);
  for (const name of Object.keys(properties)) {
    if (!required.includes(name) && !fields[name]?.required) properties[name] = Type.Optional(properties[name]!);
  }
  return Type.Object(properties);
}

// The reference gives a beneficiary's fields as plain strings: their shapes are strict rules.
const individualBase: Record<string, FieldDef> = {
  fullName: { required: true, strict: NOT_EMPTY },
  birthDate: { strict: { format: 'date' } },
  nationality: { strict: COUNTRY_SHAPE },
  email: { strict: { format: 'email' } },
  phoneNumber: {},
  countryOfResidence: { strict: COUNTRY_SHAPE },
};

export const BusinessBeneficiary = component(
  'BusinessBeneficiary',
  objectOf(
    {
      legalName: { required: true, strict: NOT_EMPTY },
      registrationNumber: {},
      taxId: {},
      email: { strict: { format: 'email' } },
      phoneNumber: {},
      countryOfResidence: { strict: COUNTRY_SHAPE },
    },
    { beneficiaryType: StringEnum(['BUSINESS']), address: Type.Ref(Address) },
    ['beneficiaryType'],
  ),
);

export const WalletIndividualBeneficiary = component(
  'WalletIndividualBeneficiary',
  objectOf(
    { fullName: { required: true, strict: NOT_EMPTY }, countryOfResidence: { required: true, strict: COUNTRY_SHAPE } },
    { beneficiaryType: StringEnum(['INDIVIDUAL']) },
    ['beneficiaryType'],
  ),
);

const WalletBeneficiary = component(
  'WalletBeneficiaryOneOf',
  DiscriminatedUnion('beneficiaryType', [Type.Ref(WalletIndividualBeneficiary), Type.Ref(BusinessBeneficiary)], {
    INDIVIDUAL: '#/components/schemas/WalletIndividualBeneficiary',
    BUSINESS: '#/components/schemas/BusinessBeneficiary',
  }),
);

function beneficiaryUnion(def: AccountTypeDef): TSchema {
  if (def.kind === 'WALLET') return Type.Ref(WalletBeneficiary);
  const name = `${def.schemaPrefix}Beneficiary`;
  const individual = component(
    name,
    objectOf(
      { ...individualBase, ...def.beneficiary?.extra },
      { beneficiaryType: StringEnum(['INDIVIDUAL']), address: Type.Ref(Address) },
      ['beneficiaryType', ...(def.beneficiary?.require ?? [])],
    ),
  );
  return DiscriminatedUnion('beneficiaryType', [Type.Ref(individual), Type.Ref(BusinessBeneficiary)], {
    INDIVIDUAL: `#/components/schemas/${name}`,
    BUSINESS: '#/components/schemas/BusinessBeneficiary',
  });
}

function infoSchema(def: AccountTypeDef, response: boolean): TSchema {
  const fixed: Record<string, TSchema> = { accountType: StringEnum([def.accountType]) };
  const required = ['accountType'];
  if (def.kind !== 'LIGHTNING') {
    fixed.beneficiary = beneficiaryUnion(def);
    if (def.kind === 'BANK') required.push('beneficiary');
  }
  if (def.kind === 'WALLET') fixed.vaspName = strictly(Type.String(), NOT_EMPTY);
  if (response && def.paymentRails) {
    fixed.paymentRails = Type.Array(StringEnum(def.paymentRails));
    required.push('paymentRails');
  }
  return objectOf(def.fields, fixed, required);
}

/** Wallet types share one schema for requests and responses, as in the reference. */
function infoName(def: AccountTypeDef, response: boolean): string {
  return def.kind === 'BANK' && !response
    ? `${def.schemaPrefix}ExternalAccountCreateInfo`
    : `${def.schemaPrefix}ExternalAccountInfo`;
}

const createVariants = ACCOUNT_TYPES.map((def) => component(infoName(def, false), infoSchema(def, false)));
const responseVariants = ACCOUNT_TYPES.map((def) => component(infoName(def, true), infoSchema(def, true)));

const createMapping = Object.fromEntries(
  ACCOUNT_TYPES.map((def) => [def.accountType, `#/components/schemas/${infoName(def, false)}`]),
);
const responseMapping: Record<string, string> = Object.fromEntries(
  ACCOUNT_TYPES.map((def) => [def.accountType, `#/components/schemas/${infoName(def, true)}`]),
);
// The reference lists LIGHTNING_ACCOUNT as another name for the lightning shape in responses.
responseMapping.LIGHTNING_ACCOUNT = '#/components/schemas/LightningExternalAccountInfo';

/** An accountInfo as a service sees it: the discriminator plus the type's own fields. */
export type AccountInfoInput = { accountType: string } & Record<string, unknown>;

export const ExternalAccountCreateInfo = component(
  'ExternalAccountCreateInfoOneOf',
  DiscriminatedUnion<AccountInfoInput>(
    'accountType',
    createVariants.map((v) => Type.Ref(v)),
    createMapping,
  ),
);
export const ExternalAccountInfo = component(
  'ExternalAccountInfoOneOf',
  DiscriminatedUnion(
    'accountType',
    responseVariants.map((v) => Type.Ref(v)),
    responseMapping,
  ),
);

export const ExternalAccount = component(
  'ExternalAccount',
  Type.Object({
    id: Type.String(),
    customerId: Type.Optional(Type.String()),
    status: StringEnum(EXTERNAL_ACCOUNT_STATUSES),
    platformAccountId: Type.Optional(Type.String()),
    ownershipType: Type.Optional(StringEnum(OWNERSHIP_TYPES)),
    currency: Type.String(),
    defaultUmaDepositAccount: Type.Optional(Type.Boolean()),
    beneficiaryVerificationStatus: Type.Optional(StringEnum(BENEFICIARY_VERIFICATION_STATUSES)),
    beneficiaryVerifiedData: Type.Optional(Type.Object({ fullName: Type.Optional(Type.String()) })),
    accountInfo: Type.Ref(ExternalAccountInfo),
  }),
);

export const ExternalAccountList = PageOf('ExternalAccountListResponse', Type.Ref(ExternalAccount));

const createFields = {
  currency: Type.String({ minLength: 1 }),
  platformAccountId: Type.Optional(Type.String({ minLength: 1 })),
  ownershipType: Type.Optional(StringEnum(OWNERSHIP_TYPES)),
  accountInfo: Type.Ref(ExternalAccountCreateInfo),
};

export const PlatformExternalAccountCreateRequest = component(
  'PlatformExternalAccountCreateRequest',
  Type.Object(createFields),
);

export const ExternalAccountCreateRequest = component(
  'ExternalAccountCreateRequest',
  Type.Object({
    customerId: Type.Optional(Type.String()),
    ...createFields,
    defaultUmaDepositAccount: Type.Optional(Type.Boolean({ default: false })),
  }),
);

export const OwnershipChallengeRequest = component(
  'OwnershipChallengeRequest',
  Type.Object({ method: StringEnum(['WALLET_SIGNATURE', 'LIVENESS']) }),
);

const WalletSignatureChallenge = component(
  'WalletSignatureChallenge',
  Type.Object({ method: StringEnum(['WALLET_SIGNATURE']), messageToSign: Type.String(), expiresAt: DateTime }),
);
const LivenessChallenge = component(
  'LivenessChallenge',
  Type.Object({
    method: StringEnum(['LIVENESS']),
    verificationLink: Type.String({ format: 'uri' }),
    token: Type.Optional(Type.String()),
    expiresAt: DateTime,
  }),
);
export const OwnershipChallenge = component(
  'OwnershipChallenge',
  DiscriminatedUnion('method', [Type.Ref(WalletSignatureChallenge), Type.Ref(LivenessChallenge)], {
    WALLET_SIGNATURE: '#/components/schemas/WalletSignatureChallenge',
    LIVENESS: '#/components/schemas/LivenessChallenge',
  }),
);

export const OwnershipVerifyRequest = component(
  'OwnershipVerifyRequest',
  Type.Object({
    signature: Type.String({ minLength: 1 }),
    signatureScheme: Type.Optional(StringEnum(['bip137', 'electrum'], { default: 'bip137' })),
  }),
);

export const ExternalAccountIdParams = Type.Object({ externalAccountId: Type.String() });

export const PlatformExternalAccountListQuery = Type.Object({ currency: Type.Optional(Type.String()), ...PageQuery });

export const CustomerExternalAccountListQuery = Type.Object({
  currency: Type.Optional(Type.String()),
  customerId: Type.Optional(Type.String()),
  ...PageQuery,
});
