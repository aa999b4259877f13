import { Type } from '@sinclair/typebox';
import { component, DateTime, NOT_EMPTY, PageOf, PageQuery, StringEnum, strictly } from '../../http/schemas.js';
import { CountryCode } from '../customers/schemas.js';

export const DOCUMENT_TYPES = [
  'PASSPORT',
  'DRIVERS_LICENSE',
  'NATIONAL_ID',
  'PROOF_OF_ADDRESS',
  'BANK_STATEMENT',
  'TAX_RETURN',
  'CERTIFICATE_OF_INCORPORATION',
  'ARTICLES_OF_INCORPORATION',
  'ARTICLES_OF_ASSOCIATION',
  'STATE_REGISTRY_EXCERPT',
  'GOOD_STANDING_CERTIFICATE',
  'INFORMATION_STATEMENT',
  'INCUMBENCY_CERTIFICATE',
  'BUSINESS_LICENSE',
  'SHAREHOLDER_REGISTER',
  'POWER_OF_ATTORNEY',
  'UTILITY_BILL',
  'ELECTRICITY_BILL',
  'RENT_OR_LEASE_AGREEMENT',
  'DIRECTOR_REGISTRY',
  'TRUST_AGREEMENT',
  'STATE_COMPANY_REGISTRY',
  'PARTNERSHIP_CONTROL_AGREEMENT',
  'PARTNERSHIP_AGREEMENT',
  'SELFIE',
  'OTHER',
] as const;
export type DocumentTypeValue = (typeof DOCUMENT_TYPES)[number];

export const DocumentType = component('DocumentType', StringEnum(DOCUMENT_TYPES));
const Side = StringEnum(['FRONT', 'BACK']);

export const Document = component(
  'Document',
  Type.Object({
    id: Type.String(),
    documentHolder: Type.String(),
    documentType: Type.Ref(DocumentType),
    side: Type.Optional(Side),
    country: Type.String(),
    documentNumber: Type.Optional(Type.String()),
    issuingAuthority: Type.Optional(Type.String()),
    fileName: Type.String(),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const DocumentList = PageOf('DocumentListResponse', Type.Ref(Document));

/** The text fields of an upload or a replacement, checked like a JSON body. */
const metadataFields = {
  documentType: Type.Ref(DocumentType),
  side: Type.Optional(Side),
  country: CountryCode,
  documentNumber: Type.Optional(strictly(Type.String({ maxLength: 255 }), NOT_EMPTY)),
  issuingAuthority: Type.Optional(strictly(Type.String({ maxLength: 255 }), NOT_EMPTY)),
};
export const DocumentReplaceFields = Type.Object(metadataFields);
export const DocumentUploadFields = Type.Object({
  documentHolder: Type.String({ pattern: '^(Customer|BeneficialOwner):.+$' }),
  ...metadataFields,
});

// The multipart bodies as the OpenAPI document describes them.
const File = Type.String({ format: 'binary' });
export const DocumentReplaceRequest = component(
  'DocumentReplaceRequest',
  Type.Object({ file: File, ...metadataFields }),
);
export const DocumentUploadRequest = component(
  'DocumentUploadRequest',
  Type.Object({ file: File, documentHolder: Type.String(), ...metadataFields }),
);

export const DocumentListQuery = Type.Object({ documentHolder: Type.Optional(Type.String()), ...PageQuery });
export const DocumentIdParams = Type.Object({ documentId: Type.String() });
