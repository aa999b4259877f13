import { Type, type TSchema } from '@sinclair/typebox';
import {
  component,
  CreatedUpdatedQuery,
  DateTime,
  DiscriminatedUnion,
  NOT_EMPTY,
  PageOf,
  PageQuery,
  StringEnum,
  strictly,
} from '../../http/schemas.js';
import { Address } from '../external-accounts/schemas.js';

// Customers of both types, named as the reference names them. The reference composes them
// with allOf; here each request and response shape is one flat object, which validates the
// same and lets errors name fields plainly.

export const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', minLength: 2, maxLength: 2 });
export const Email = Type.String({ format: 'email' });
export const PhoneNumber = Type.String({ pattern: '^\\+[1-9]\\d{1,14}$' });
export const DateOnly = Type.String({ format: 'date' });

export const CUSTOMER_TYPES = ['INDIVIDUAL', 'BUSINESS'] as const;
export const KYC_STATUSES = ['UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED', 'HOLD'] as const;
export type KycStatusValue = (typeof KYC_STATUSES)[number];

export const CustomerType = component('CustomerType', StringEnum(CUSTOMER_TYPES));
export const KycStatus = component('KycStatus', StringEnum(KYC_STATUSES));
export const KybStatus = component('KybStatus', StringEnum(KYC_STATUSES));
export const IdentificationType = component('IdentificationType', StringEnum(['SSN', 'ITIN', 'EIN', 'NON_US_TAX_ID']));
export const ContactVerificationStatus = component('ContactVerificationStatus', StringEnum(['PENDING', 'VERIFIED']));

const EntityType = component(
  'EntityType',
  StringEnum([
    'SOLE_PROPRIETORSHIP',
    'PARTNERSHIP',
    'LLC',
    'CORPORATION',
    'S_CORPORATION',
    'NON_PROFIT',
    'PUBLICLY_LISTED_COMPANY',
    'TRUST',
    'PRIVATE_FOUNDATION',
    'CHARITY',
    'OTHER',
  ]),
);
const BusinessType = component(
  'BusinessType',
  StringEnum([
    'AGRICULTURE_FORESTRY_FISHING_AND_HUNTING',
    'MINING_QUARRYING_AND_OIL_AND_GAS_EXTRACTION',
    'UTILITIES',
    'CONSTRUCTION',
    'MANUFACTURING',
    'WHOLESALE_TRADE',
    'RETAIL_TRADE',
    'TRANSPORTATION_AND_WAREHOUSING',
    'INFORMATION',
    'FINANCE_AND_INSURANCE',
    'REAL_ESTATE_AND_RENTAL_AND_LEASING',
    'PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES',
    'MANAGEMENT_OF_COMPANIES_AND_ENTERPRISES',
    'ADMINISTRATIVE_AND_SUPPORT_AND_WASTE_MANAGEMENT_AND_REMEDIATION_SERVICES',
    'EDUCATIONAL_SERVICES',
    'HEALTH_CARE_AND_SOCIAL_ASSISTANCE',
    'ARTS_ENTERTAINMENT_AND_RECREATION',
    'ACCOMMODATION_AND_FOOD_SERVICES',
    'OTHER_SERVICES',
    'PUBLIC_ADMINISTRATION',
  ]),
);
const PurposeOfAccount = component(
  'PurposeOfAccount',
  StringEnum([
    'CONTRACTOR_PAYOUTS',
    'CREATOR_PAYOUTS',
    'EMPLOYEE_PAYOUTS',
    'MARKETPLACE_SELLER_PAYOUTS',
    'SUPPLIER_PAYMENTS',
    'CROSS_BORDER_B2B',
    'AR_AUTOMATION',
    'AP_AUTOMATION',
    'EMBEDDED_PAYMENTS',
    'PLATFORM_FEE_COLLECTION',
    'P2P_TRANSFERS',
    'CHARITABLE_DONATIONS',
    'OTHER',
  ]),
);
const SourceOfFundsCategory = component(
  'SourceOfFundsCategory',
  StringEnum([
    'OPERATING_REVENUE',
    'INVESTMENT_INCOME',
    'LOANS',
    'VENTURE_CAPITAL',
    'PERSONAL_SAVINGS',
    'DONATIONS',
    'OTHER',
  ]),
);
const IndividualSourceOfFundsCategory = component(
  'IndividualSourceOfFundsCategory',
  StringEnum([
    'SALARY',
    'SELF_EMPLOYMENT_INCOME',
    'INVESTMENT_INCOME',
    'PENSION',
    'RENTAL_INCOME',
    'GIFT',
    'INHERITANCE',
    'LOAN',
    'SAVINGS',
    'SALE_OF_ASSETS',
    'OTHER',
  ]),
);
const SourceOfWealthCategory = component(
  'SourceOfWealthCategory',
  StringEnum([
    'SALARY',
    'BUSINESS_INCOME',
    'INVESTMENTS',
    'INHERITANCE',
    'PROPERTY_SALE',
    'GIFT',
    'RETIREMENT',
    'SAVINGS',
    'OTHER',
  ]),
);
const TRANSACTION_COUNTS = [
  'COUNT_UNDER_10',
  'COUNT_10_TO_100',
  'COUNT_100_TO_500',
  'COUNT_500_TO_1000',
  'COUNT_OVER_1000',
] as const;
const TRANSACTION_VOLUMES = [
  'VOLUME_UNDER_10K',
  'VOLUME_10K_TO_100K',
  'VOLUME_100K_TO_1M',
  'VOLUME_1M_TO_10M',
  'VOLUME_OVER_10M',
] as const;
const ExpectedMonthlyTransactionCount = component('ExpectedMonthlyTransactionCount', StringEnum(TRANSACTION_COUNTS));
const ExpectedMonthlyTransactionVolume = component('ExpectedMonthlyTransactionVolume', StringEnum(TRANSACTION_VOLUMES));
const AnnualIncomeRange = component(
  'AnnualIncomeRange',
  StringEnum(['UNDER_50K', 'RANGE_50K_100K', 'RANGE_100K_250K', 'RANGE_250K_1M', 'OVER_1M']),
);
const NetWorthRange = component(
  'NetWorthRange',
  StringEnum(['UNDER_100K', 'RANGE_100K_500K', 'RANGE_500K_1M', 'RANGE_1M_5M', 'RANGE_5M_25M', 'OVER_25M']),
);
const PepStatus = component('PepStatus', StringEnum(['NONE', 'DOMESTIC', 'FOREIGN', 'HIO', 'FAMILY_OR_ASSOCIATE']));
const EndUserTermsAcceptanceMethod = component(
  'EndUserTermsAcceptanceMethod',
  StringEnum(['CHECKBOX', 'CLICK_TO_ACCEPT']),
);

const endUserTermsConsentFields = {
  acceptedAt: DateTime,
  ipAddress: strictly(Type.String({ maxLength: 45 }), NOT_EMPTY),
  // Must be the current version (customers/service.ts): END_USER_TERMS_VERSION_NOT_FOUND otherwise.
  termsVersion: Type.String(),
  acceptanceMethod: Type.Ref(EndUserTermsAcceptanceMethod),
};
export const EndUserTermsConsentRequest = component(
  'EndUserTermsConsentRequest',
  Type.Object(endUserTermsConsentFields),
);
export const EndUserTermsConsent = component('EndUserTermsConsent', Type.Object(endUserTermsConsentFields));

export const ContactVerification = component(
  'ContactVerification',
  Type.Object({
    email: Type.Optional(Type.Ref(ContactVerificationStatus)),
    phone: Type.Optional(Type.Ref(ContactVerificationStatus)),
  }),
);

const Countries = Type.Array(CountryCode);
const Description = Type.String({ minLength: 1, maxLength: 500 });

/** The fields of businessInfo; `required` differs between create, update and response. */
function businessInfoObject(required: readonly string[]): TSchema {
  const properties: Record<string, TSchema> = {
    legalName: strictly(Type.String(), NOT_EMPTY),
    doingBusinessAs: Type.String(),
    country: CountryCode,
    registrationNumber: strictly(Type.String(), NOT_EMPTY),
    incorporatedOn: DateOnly,
    entityType: Type.Ref(EntityType),
    taxId: strictly(Type.String(), NOT_EMPTY),
    countriesOfOperation: Countries,
    businessType: Type.Ref(BusinessType),
    purposeOfAccount: Type.Ref(PurposeOfAccount),
    sourceOfFunds: Type.String(),
    expectedMonthlyTransactionCount: StringEnum(TRANSACTION_COUNTS),
    expectedMonthlyTransactionVolume: StringEnum(TRANSACTION_VOLUMES),
    expectedRecipientJurisdictions: Countries,
    naicsCode: Type.String({ pattern: '^\\d{2,6}$' }),
    sourceOfFundsCategories: Type.Array(Type.Ref(SourceOfFundsCategory)),
    sourceOfFundsOtherDescription: Description,
    purposeOfAccountOtherDescription: Description,
    expectedCounterpartyCountries: Countries,
    primaryContactFirstName: Type.String({ maxLength: 250 }),
    primaryContactLastName: Type.String({ maxLength: 250 }),
  };
  for (const name of Object.keys(properties))
    if (!required.includes(name)) properties[name] = Type.Optional(properties[name]!);
  return Type.Object(properties);
}

export const BusinessInfo = component(
  'BusinessInfo',
  businessInfoObject(['legalName', 'country', 'incorporatedOn', 'taxId']),
);
export const BusinessInfoUpdate = component('BusinessInfoUpdate', businessInfoObject([]));
export const BusinessInfoResponse = component('BusinessInfoResponse', businessInfoObject(['legalName']));

/** Enhanced-due-diligence answers an individual may carry. */
const eddFields = {
  sourceOfFundsCategories: Type.Optional(Type.Array(Type.Ref(IndividualSourceOfFundsCategory))),
  sourceOfFundsOtherDescription: Type.Optional(Type.String()),
  sourceOfWealthCategories: Type.Optional(Type.Array(Type.Ref(SourceOfWealthCategory))),
  sourceOfWealthOtherDescription: Type.Optional(Type.String()),
  purposeOfAccount: Type.Optional(Type.Ref(PurposeOfAccount)),
  purposeOfAccountOtherDescription: Type.Optional(Type.String()),
  expectedMonthlyTransactionCount: Type.Optional(Type.Ref(ExpectedMonthlyTransactionCount)),
  expectedMonthlyTransactionVolume: Type.Optional(Type.Ref(ExpectedMonthlyTransactionVolume)),
  annualIncomeRange: Type.Optional(Type.Ref(AnnualIncomeRange)),
  netWorthRange: Type.Optional(Type.Ref(NetWorthRange)),
  pepStatus: Type.Optional(Type.Ref(PepStatus)),
};

/** An individual's own fields as every response shows them (never `identifier`). */
const individualFields = {
  kycStatus: Type.Optional(Type.Ref(KycStatus)),
  fullName: Type.Optional(strictly(Type.String(), NOT_EMPTY)),
  birthDate: Type.Optional(DateOnly),
  nationality: Type.Optional(CountryCode),
  address: Type.Optional(Type.Ref(Address)),
  idType: Type.Optional(Type.Ref(IdentificationType)),
  countryOfIssuance: Type.Optional(CountryCode),
  ...eddFields,
};

/**
 * What a request may add: the write-only identification number, and the founding
 * specification's names `taxIdType` / `taxIdentifier`, accepted as aliases of `idType` /
 * `identifier`.
 */
const individualRequestFields = {
  ...individualFields,
  identifier: Type.Optional(strictly(Type.String(), NOT_EMPTY)),
  taxIdType: Type.Optional(Type.Ref(IdentificationType)),
  taxIdentifier: Type.Optional(strictly(Type.String(), NOT_EMPTY)),
};

const businessRequestFields = {
  kybStatus: Type.Optional(Type.Ref(KybStatus)),
  address: Type.Optional(Type.Ref(Address)),
};

const createFields = {
  platformCustomerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  region: Type.Optional(CountryCode),
  // Each must be a currency the platform supports (customers/service.ts), whatever its shape.
  currencies: Type.Optional(Type.Array(Type.String())),
  email: Type.Optional(Email),
  phoneNumber: Type.Optional(PhoneNumber),
  umaAddress: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  endUserTermsConsent: Type.Optional(Type.Ref(EndUserTermsConsentRequest)),
};

const updateFields = {
  currencies: createFields.currencies,
  email: createFields.email,
  phoneNumber: createFields.phoneNumber,
  umaAddress: createFields.umaAddress,
  endUserTermsConsent: createFields.endUserTermsConsent,
};

export const IndividualCustomerCreateRequest = component(
  'IndividualCustomerCreateRequest',
  Type.Object({ customerType: StringEnum(['INDIVIDUAL']), ...createFields, ...individualRequestFields }),
);
export const BusinessCustomerCreateRequest = component(
  'BusinessCustomerCreateRequest',
  Type.Object({
    customerType: StringEnum(['BUSINESS']),
    ...createFields,
    ...businessRequestFields,
    businessInfo: Type.Ref(BusinessInfo),
  }),
);
export const CustomerCreateRequest = component(
  'CustomerCreateRequestOneOf',
  DiscriminatedUnion(
    'customerType',
    [Type.Ref(IndividualCustomerCreateRequest), Type.Ref(BusinessCustomerCreateRequest)],
    {
      INDIVIDUAL: '#/components/schemas/IndividualCustomerCreateRequest',
      BUSINESS: '#/components/schemas/BusinessCustomerCreateRequest',
    },
  ),
);

export const IndividualCustomerUpdateRequest = component(
  'IndividualCustomerUpdateRequest',
  Type.Object({ customerType: StringEnum(['INDIVIDUAL']), ...updateFields, ...individualRequestFields }),
);
export const BusinessCustomerUpdateRequest = component(
  'BusinessCustomerUpdateRequest',
  Type.Object({
    customerType: StringEnum(['BUSINESS']),
    ...updateFields,
    ...businessRequestFields,
    businessInfo: Type.Optional(Type.Ref(BusinessInfoUpdate)),
  }),
);
export const CustomerUpdateRequest = component(
  'CustomerUpdateRequestOneOf',
  DiscriminatedUnion(
    'customerType',
    [Type.Ref(IndividualCustomerUpdateRequest), Type.Ref(BusinessCustomerUpdateRequest)],
    {
      INDIVIDUAL: '#/components/schemas/IndividualCustomerUpdateRequest',
      BUSINESS: '#/components/schemas/BusinessCustomerUpdateRequest',
    },
  ),
);

/** What a request body of either type can carry, as the service reads it. */
export type CustomerInput = Record<string, unknown> & { customerType?: unknown };

const customerFields = {
  id: Type.String(),
  platformCustomerId: Type.String(),
  endUserTermsConsent: Type.Optional(Type.Ref(EndUserTermsConsent)),
  region: Type.Optional(Type.String()),
  currencies: Type.Optional(Type.Array(Type.String())),
  email: Type.Optional(Type.String()),
  phoneNumber: Type.Optional(Type.String()),
  umaAddress: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
  isDeleted: Type.Boolean(),
  contactVerification: Type.Optional(Type.Ref(ContactVerification)),
};

export const Customer = component('Customer', Type.Object({ ...customerFields, customerType: Type.Ref(CustomerType) }));
export const IndividualCustomer = component(
  'IndividualCustomer',
  Type.Object({ ...customerFields, customerType: StringEnum(['INDIVIDUAL']), ...individualFields }),
);
export const BusinessCustomer = component(
  'BusinessCustomer',
  Type.Object({
    ...customerFields,
    customerType: StringEnum(['BUSINESS']),
    kybStatus: Type.Optional(Type.Ref(KybStatus)),
    address: Type.Optional(Type.Ref(Address)),
    businessInfo: Type.Optional(Type.Ref(BusinessInfoResponse)),
    // note: by name, because the beneficial-owners schemas build on this file.
    beneficialOwners: Type.Optional(Type.Array(Type.Ref('BeneficialOwner'))),
  }),
);
export const CustomerOneOf = component(
  'CustomerOneOf',
  DiscriminatedUnion('customerType', [Type.Ref(IndividualCustomer), Type.Ref(BusinessCustomer)], {
    INDIVIDUAL: '#/components/schemas/IndividualCustomer',
    BUSINESS: '#/components/schemas/BusinessCustomer',
  }),
);

export const CustomerList = PageOf('CustomerListResponse', Type.Ref(CustomerOneOf));

export const CustomerListQuery = Type.Object({
  platformCustomerId: Type.Optional(Type.String()),
  customerType: Type.Optional(Type.Ref(CustomerType)),
  ...CreatedUpdatedQuery,
  ...PageQuery,
  region: Type.Optional(Type.String()),
  currency: Type.Optional(Type.String()),
  umaAddress: Type.Optional(Type.String()),
  isIncludingDeleted: Type.Optional(Type.Boolean()),
});

export const CustomerIdParams = Type.Object({ customerId: Type.String() });

export const EndUserTerms = component(
  'EndUserTerms',
  Type.Object({ version: Type.String(), url: Type.String({ format: 'uri' }) }),
);

export const ContactVerificationConfirmRequest = component(
  'ContactVerificationConfirmRequest',
  Type.Object({ code: Type.String({ minLength: 1 }) }),
);
