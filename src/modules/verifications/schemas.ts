import { Type } from '@sinclair/typebox';
import { component, DateTime, PageOf, PageQuery, StringEnum, strictly } from '../../http/schemas.js';
import { DocumentType } from '../documents/schemas.js';

export const VERIFICATION_STATUSES = [
  'RESOLVE_ERRORS',
  'PENDING_MANUAL_REVIEW',
  'IN_PROGRESS',
  'APPROVED',
  'REJECTED',
  'READY_FOR_VERIFICATION',
] as const;
export type VerificationStatusValue = (typeof VERIFICATION_STATUSES)[number];

export const VERIFICATION_ERROR_TYPES = [
  'MISSING_FIELD',
  'INVALID_FIELD',
  'MISSING_LEGAL_PRESENCE_DOCUMENT',
  'MISSING_CONTROL_STRUCTURE_DOCUMENT',
  'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT',
  'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
  'MISSING_IDENTITY_DOCUMENT',
  'INVALID_DOCUMENT',
  'EXPIRED_DOCUMENT',
  'POOR_QUALITY_DOCUMENT',
  'SUSPECTED_FRAUD_DOCUMENT',
  'WRONG_DOCUMENT_TYPE',
  'INCOMPLETE_DOCUMENT',
  'UNREADABLE_DOCUMENT',
  'DOCUMENT_VERIFICATION_FAILED',
  'APPLICANT_SANCTIONED',
  'APPLICANT_FRAUD',
  'APPLICANT_CRIMINAL_RECORD',
  'APPLICANT_REJECTED',
  'MISSING_BENEFICIAL_OWNER',
  'MISSING_CONTROL_PERSON',
  'MISSING_GOOD_STANDING_DOCUMENT',
] as const;
export type VerificationErrorTypeValue = (typeof VERIFICATION_ERROR_TYPES)[number];

export const VerificationStatus = component('VerificationStatus', StringEnum(VERIFICATION_STATUSES));
export const VerificationErrorType = component('VerificationErrorType', StringEnum(VERIFICATION_ERROR_TYPES));

export const VerificationError = component(
  'VerificationError',
  Type.Object({
    resourceId: Type.String(),
    type: Type.Ref(VerificationErrorType),
    field: Type.Optional(Type.String()),
    acceptedDocumentTypes: Type.Optional(Type.Array(Type.Ref(DocumentType))),
    reason: Type.String(),
  }),
);

export const Verification = component(
  'Verification',
  Type.Object({
    id: Type.String(),
    customerId: Type.String(),
    verificationStatus: Type.Ref(VerificationStatus),
    errors: Type.Array(Type.Ref(VerificationError)),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const VerificationRequest = component(
  'VerificationRequest',
  Type.Object({ customerId: Type.String({ minLength: 1 }) }),
);
export const VerificationList = PageOf('VerificationListResponse', Type.Ref(Verification));
export const VerificationListQuery = Type.Object({
  customerId: Type.Optional(Type.String()),
  verificationStatus: Type.Optional(Type.Ref(VerificationStatus)),
  ...PageQuery,
});
export const VerificationIdParams = Type.Object({ verificationId: Type.String() });

export const KycProvider = component('KycProvider', StringEnum(['SUMSUB']));
export const KycLinkCreateRequest = component(
  'KycLinkCreateRequest',
  Type.Object({ redirectUri: Type.Optional(strictly(Type.String({ format: 'uri' }), { pattern: '^https?://' })) }),
);
export const KycLinkResponse = component(
  'KycLinkResponse',
  Type.Object({
    kycUrl: Type.String(),
    expiresAt: DateTime,
    provider: Type.Ref(KycProvider),
    token: Type.Optional(Type.String()),
  }),
);
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});
