import { Type } from '@sinclair/typebox';
import { component, DateTime, NOT_EMPTY, PageOf, PageQuery, StringEnum, strictly } from '../../http/schemas.js';
import { CountryCode, DateOnly, Email, IdentificationType, KycStatus, PhoneNumber } from '../customers/schemas.js';
import { Address } from '../external-accounts/schemas.js';

export const BeneficialOwnerRole = component(
  'BeneficialOwnerRole',
  StringEnum(['UBO', 'DIRECTOR', 'COMPANY_OFFICER', 'CONTROL_PERSON', 'TRUSTEE', 'GENERAL_PARTNER']),
);

const personalInfoFields = {
  firstName: strictly(Type.String(), NOT_EMPTY),
  middleName: Type.Optional(Type.String()),
  lastName: strictly(Type.String(), NOT_EMPTY),
  birthDate: DateOnly,
  nationality: CountryCode,
  email: Type.Optional(Email),
  phoneNumber: Type.Optional(PhoneNumber),
  address: Type.Ref(Address),
  idType: Type.Ref(IdentificationType),
  identifier: strictly(Type.String(), NOT_EMPTY),
  countryOfIssuance: Type.Optional(CountryCode),
};

export const BeneficialOwnerPersonalInfo = component('BeneficialOwnerPersonalInfo', Type.Object(personalInfoFields));
export const BeneficialOwnerPersonalInfoUpdate = component(
  'BeneficialOwnerPersonalInfoUpdate',
  Type.Partial(Type.Object(personalInfoFields)),
);

const Roles = strictly(Type.Array(Type.Ref(BeneficialOwnerRole)), { minItems: 1, uniqueItems: true });
const OwnershipPercentage = Type.Integer({ minimum: 0, maximum: 100 });

export const BeneficialOwner = component(
  'BeneficialOwner',
  Type.Object({
    id: Type.String(),
    customerId: Type.String(),
    roles: Type.Array(Type.Ref(BeneficialOwnerRole)),
    ownershipPercentage: OwnershipPercentage,
    personalInfo: Type.Ref(BeneficialOwnerPersonalInfo),
    kycStatus: Type.Ref(KycStatus),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const BeneficialOwnerCreateRequest = component(
  'BeneficialOwnerCreateRequest',
  Type.Object({
    customerId: Type.String({ minLength: 1 }),
    roles: Roles,
    ownershipPercentage: OwnershipPercentage,
    personalInfo: Type.Ref(BeneficialOwnerPersonalInfo),
  }),
);

export const BeneficialOwnerUpdateRequest = component(
  'BeneficialOwnerUpdateRequest',
  Type.Object({
    roles: Type.Optional(Roles),
    ownershipPercentage: Type.Optional(OwnershipPercentage),
    personalInfo: Type.Optional(Type.Ref(BeneficialOwnerPersonalInfoUpdate)),
  }),
);

export const BeneficialOwnerList = PageOf('BeneficialOwnerListResponse', Type.Ref(BeneficialOwner));

export const BeneficialOwnerListQuery = Type.Object({ customerId: Type.String(), ...PageQuery });

export const BeneficialOwnerIdParams = Type.Object({ beneficialOwnerId: Type.String() });
