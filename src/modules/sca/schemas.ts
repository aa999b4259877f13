import { Type } from '@sinclair/typebox';
import { component, DateTime, DiscriminatedUnion, StringEnum, NOT_EMPTY, strictly } from '../../http/schemas.js';
import { SCA_FACTORS, ScaChallenge } from '../quotes/schemas.js';

export type ScaFactorName = (typeof SCA_FACTORS)[number];

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));
const OpaqueObject = Type.Object({}, { additionalProperties: true });

export const ScaFactor = component('ScaFactor', StringEnum(SCA_FACTORS));

export const ScaFactorView = component(
  'ScaFactorView',
  Type.Object({
    factor: Type.Ref(ScaFactor),
    credentialId: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
  }),
);

export const ScaFactorList = component('ScaFactorList', Type.Object({ factors: Type.Array(Type.Ref(ScaFactorView)) }));

export const TotpFactorEnrollRequest = component(
  'TotpFactorEnrollRequest',
  Type.Object({ type: StringEnum(['TOTP']) }),
);
export const PasskeyFactorEnrollRequest = component(
  'PasskeyFactorEnrollRequest',
  Type.Object({ type: StringEnum(['PASSKEY']) }),
);
export const ScaFactorEnrollRequest = component(
  'ScaFactorEnrollRequestOneOf',
  DiscriminatedUnion<{ type: 'TOTP' | 'PASSKEY' }>(
    'type',
    [Type.Ref(TotpFactorEnrollRequest), Type.Ref(PasskeyFactorEnrollRequest)],
    {
      TOTP: '#/components/schemas/TotpFactorEnrollRequest',
      PASSKEY: '#/components/schemas/PasskeyFactorEnrollRequest',
    },
  ),
);

export const TotpEnrollmentStart = component(
  'TotpEnrollmentStart',
  Type.Object({
    type: StringEnum(['TOTP']),
    secret: Type.String(),
    secretBase32Encoded: Type.String(),
    totpUri: Type.String(),
  }),
);
export const PasskeyEnrollmentStart = component(
  'PasskeyEnrollmentStart',
  Type.Object({
    type: StringEnum(['PASSKEY']),
    options: OpaqueObject,
    allowedOrigins: Type.Array(Type.String()),
    relyingPartyId: Type.String(),
  }),
);
export const ScaFactorEnrollStart = component(
  'ScaFactorEnrollStartOneOf',
  DiscriminatedUnion('type', [Type.Ref(TotpEnrollmentStart), Type.Ref(PasskeyEnrollmentStart)], {
    TOTP: '#/components/schemas/TotpEnrollmentStart',
    PASSKEY: '#/components/schemas/PasskeyEnrollmentStart',
  }),
);

export const TotpEnrollmentConfirmRequest = component(
  'TotpEnrollmentConfirmRequest',
  Type.Object({ type: StringEnum(['TOTP']), secret: Type.String(), code: Type.String() }),
);
export const PasskeyEnrollmentConfirmRequest = component(
  'PasskeyEnrollmentConfirmRequest',
  Type.Object({ type: StringEnum(['PASSKEY']), origin: Type.String(), credential: OpaqueObject }),
);
export type ScaFactorConfirmInput =
  | { type: 'TOTP'; secret: string; code: string }
  | { type: 'PASSKEY'; origin: string; credential: Record<string, unknown> };
export const ScaFactorConfirmRequest = component(
  'ScaFactorConfirmRequestOneOf',
  DiscriminatedUnion<ScaFactorConfirmInput>(
    'type',
    [Type.Ref(TotpEnrollmentConfirmRequest), Type.Ref(PasskeyEnrollmentConfirmRequest)],
    {
      TOTP: '#/components/schemas/TotpEnrollmentConfirmRequest',
      PASSKEY: '#/components/schemas/PasskeyEnrollmentConfirmRequest',
    },
  ),
);

export const TotpEnrollmentConfirmResponse = component(
  'TotpEnrollmentConfirmResponse',
  Type.Object({ type: StringEnum(['TOTP']), recoveryCodes: Type.Array(Type.String()) }),
);
export const PasskeyEnrollmentConfirmResponse = component(
  'PasskeyEnrollmentConfirmResponse',
  Type.Object({ type: StringEnum(['PASSKEY']), factor: Type.Ref(ScaFactorView) }),
);
export const ScaFactorConfirmResponse = component(
  'ScaFactorConfirmResponseOneOf',
  DiscriminatedUnion('type', [Type.Ref(TotpEnrollmentConfirmResponse), Type.Ref(PasskeyEnrollmentConfirmResponse)], {
    TOTP: '#/components/schemas/TotpEnrollmentConfirmResponse',
    PASSKEY: '#/components/schemas/PasskeyEnrollmentConfirmResponse',
  }),
);

export const ScaLoginStartRequest = component('ScaLoginStartRequest', Type.Object({ factor: Type.Ref(ScaFactor) }));

export const ScaLoginStart = component(
  'ScaLoginStart',
  Type.Object({
    factor: Type.Ref(ScaFactor),
    challengeId: Nullable(Type.String()),
    expiresAt: Nullable(DateTime),
    passkeyOptions: Nullable(OpaqueObject),
    allowedOrigins: Nullable(Type.Array(Type.String())),
    relyingPartyId: Nullable(Type.String()),
  }),
);

/** The proof fields every SCA confirmation takes (as ScaAuthorization has them). */
const proofFields = {
  challengeId: Nullable(Type.String()),
  code: Nullable(Type.String()),
  passkeyAssertion: Nullable(OpaqueObject),
  origin: Nullable(Type.String()),
};

export interface ProofInput {
  challengeId?: string | null | undefined;
  code?: string | null | undefined;
  passkeyAssertion?: Record<string, unknown> | null | undefined;
  origin?: string | null | undefined;
}

export const ScaLoginCompleteRequest = component(
  'ScaLoginCompleteRequest',
  Type.Object({ factor: Type.Ref(ScaFactor), endUserIpAddress: strictly(Type.String(), NOT_EMPTY), ...proofFields }),
);

export const ScaLoginComplete = component(
  'ScaLoginComplete',
  Type.Object({ status: Type.String(), sessionExpiresAt: Nullable(DateTime) }),
);

export const SECURITY_EVENT_TYPES = ['RESET_PASSWORD_COMPLETED', 'FAILED_LOGIN_ATTEMPT'] as const;

export const RecordSecurityEventRequest = component(
  'RecordSecurityEventRequest',
  Type.Object({ eventType: StringEnum(SECURITY_EVENT_TYPES) }),
);

export const RecordSecurityEventResponse = component(
  'RecordSecurityEventResponse',
  Type.Object({
    eventType: StringEnum(SECURITY_EVENT_TYPES),
    suspended: Type.Boolean(),
    lockedUntil: Nullable(DateTime),
    failedAttempts: Type.Integer(),
  }),
);

export const CustomerIdQuery = Type.Object({ customerId: Type.String() });
export const CredentialIdParams = Type.Object({ credentialId: Type.String() });

export const BeneficiaryTrustStart = component(
  'BeneficiaryTrustStart',
  Type.Object({ scaChallenge: Type.Optional(Type.Ref(ScaChallenge)) }),
);

export const BeneficiaryTrustConfirmRequest = component(
  'BeneficiaryTrustConfirmRequest',
  Type.Object({ ...proofFields }),
);

export const BeneficiaryTrustConfirm = component('BeneficiaryTrustConfirm', Type.Object({ trusted: Type.Boolean() }));

export const ExternalAccountIdParams = Type.Object({ externalAccountId: Type.String() });

export const TwoFactorResetStartRequest = component(
  'TwoFactorResetStartRequest',
  Type.Object({ factor: Type.Ref(ScaFactor) }),
);

export const TwoFactorResetStart = component(
  'TwoFactorResetStart',
  Type.Object({
    resetId: Type.String(),
    livenessAccessToken: Nullable(Type.String()),
    verificationLink: Nullable(Type.String()),
    expiresAt: Nullable(DateTime),
  }),
);

export const TwoFactorResetStatus = component(
  'TwoFactorResetStatus',
  Type.Object({
    status: StringEnum(['INITIATED', 'PENDING_REVIEW', 'LIVENESS_PASSED', 'COMPLETED', 'REJECTED', 'EXPIRED']),
    factor: Type.Ref(ScaFactor),
    enrollmentStatus: Type.Optional(Type.Union([StringEnum(['PENDING', 'COMPLETED']), Type.Null()])),
    expiresAt: DateTime,
    completedAt: Nullable(DateTime),
  }),
);

export const TwoFactorResetCompleteRequest = component(
  'TwoFactorResetCompleteRequest',
  Type.Object({
    mobile: Type.Optional(
      Type.Object({
        countryCode: strictly(Type.String(), { pattern: '^\\+?[0-9]{1,4}$' }),
        number: strictly(Type.String(), { pattern: '^[0-9]{4,14}$' }),
      }),
    ),
  }),
);

export const ResetIdParams = Type.Object({ resetId: Type.String() });
