import { Type } from '@sinclair/typebox';
import { DateTime, DiscriminatedUnion, StringEnum, component } from '../../http/schemas.js';

export const AUTH_METHOD_TYPES = ['OAUTH', 'EMAIL_OTP', 'SMS_OTP', 'PASSKEY'] as const;
export type AuthMethodType = (typeof AUTH_METHOD_TYPES)[number];
export const DELEGATED_KEY_STATUSES = ['PENDING', 'ACTIVE', 'REVOKED'] as const;

const PUBLIC_KEY_PATTERN = '^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$';
const UNCOMPRESSED_KEY_PATTERN = '^04[0-9a-fA-F]{128}$';

export const AuthMethodTypeSchema = component('AuthMethodType', StringEnum(AUTH_METHOD_TYPES));

const authMethodFields = {
  id: Type.String(),
  accountId: Type.String(),
  type: Type.Ref(AuthMethodTypeSchema),
  credentialId: Type.Optional(Type.String()),
  nickname: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
};

export const AuthMethod = component('AuthMethod', Type.Object(authMethodFields));

export const AuthMethodResponse = component(
  'AuthMethodResponse',
  Type.Object({ ...authMethodFields, otpEncryptionTargetBundle: Type.Optional(Type.String()) }),
);

export const PasskeyAuthChallenge = component(
  'PasskeyAuthChallenge',
  Type.Object({
    ...authMethodFields,
    credentialId: Type.String(),
    challenge: Type.String(),
    requestId: Type.String(),
    expiresAt: DateTime,
  }),
);

// note: a plain union: the reference's discriminator maps two values to one branch, which
// the serializer's discriminator support cannot express; PASSKEY answers the challenge shape.
export const AuthCredentialResponseOneOf = Type.Union([Type.Ref(PasskeyAuthChallenge), Type.Ref(AuthMethodResponse)]);

export const AuthCredentialListResponse = component(
  'AuthCredentialListResponse',
  Type.Object({ data: Type.Array(Type.Ref(AuthMethod)) }),
);

export const SignedRequestChallenge = component(
  'SignedRequestChallenge',
  Type.Object({ payloadToSign: Type.String(), requestId: Type.String(), expiresAt: DateTime }),
);

export const AuthSignedRequestChallenge = component(
  'AuthSignedRequestChallenge',
  Type.Object({
    payloadToSign: Type.String(),
    requestId: Type.String(),
    expiresAt: DateTime,
    type: Type.Ref(AuthMethodTypeSchema),
  }),
);

export const DelegatedKeySignedRequestChallenge = component(
  'DelegatedKeySignedRequestChallenge',
  Type.Object({ payloadToSign: Type.String(), requestId: Type.String(), expiresAt: DateTime }),
);

export const AuthSession = component(
  'AuthSession',
  Type.Object({
    ...authMethodFields,
    encryptedSessionSigningKey: Type.Optional(Type.String()),
    expiresAt: DateTime,
  }),
);

export const SessionListResponse = component(
  'SessionListResponse',
  Type.Object({ data: Type.Array(Type.Ref(AuthSession)) }),
);

const accountId = Type.String({ minLength: 1 });

export const EmailOtpCredentialCreateRequest = component(
  'EmailOtpCredentialCreateRequest',
  Type.Object({ type: StringEnum(['EMAIL_OTP']), accountId }),
);
export const SmsOtpCredentialCreateRequest = component(
  'SmsOtpCredentialCreateRequest',
  Type.Object({ type: StringEnum(['SMS_OTP']), accountId }),
);
export const OauthCredentialCreateRequest = component(
  'OauthCredentialCreateRequest',
  Type.Object({ type: StringEnum(['OAUTH']), accountId, oidcToken: Type.String({ minLength: 1 }) }),
);
export const PasskeyAttestation = component(
  'PasskeyAttestation',
  Type.Object({
    credentialId: Type.String({ minLength: 1 }),
    clientDataJson: Type.String({ minLength: 1 }),
    attestationObject: Type.String({ minLength: 1 }),
    transports: Type.Optional(Type.Array(StringEnum(['usb', 'nfc', 'ble', 'internal', 'hybrid']))),
  }),
);
export const PasskeyCredentialCreateRequest = component(
  'PasskeyCredentialCreateRequest',
  Type.Object({
    type: StringEnum(['PASSKEY']),
    accountId,
    // The reference states the length in its description (1 to 100 characters, NICKNAME in wallet.ts).
    nickname: Type.String({ minLength: 1, maxLength: 100 }),
    challenge: Type.String({ minLength: 1 }),
    attestation: Type.Ref(PasskeyAttestation),
  }),
);

const createVariants = {
  EMAIL_OTP: EmailOtpCredentialCreateRequest,
  SMS_OTP: SmsOtpCredentialCreateRequest,
  OAUTH: OauthCredentialCreateRequest,
  PASSKEY: PasskeyCredentialCreateRequest,
};

export const AuthCredentialCreateRequestOneOf = DiscriminatedUnion(
  'type',
  Object.values(createVariants).map((v) => Type.Ref(v)),
  Object.fromEntries(Object.entries(createVariants).map(([k, v]) => [k, `#/components/schemas/${v.$id}`])),
);

export interface CredentialCreateInput {
  type: AuthMethodType;
  accountId: string;
  oidcToken?: string;
  nickname?: string;
  challenge?: string;
  attestation?: { credentialId: string; clientDataJson: string; attestationObject: string; transports?: string[] };
}

export const EmailOtpCredentialVerifyRequest = component(
  'EmailOtpCredentialVerifyRequest',
  Type.Object({ type: StringEnum(['EMAIL_OTP']), encryptedOtpBundle: Type.String({ minLength: 1 }) }),
);
export const SmsOtpCredentialVerifyRequest = component(
  'SmsOtpCredentialVerifyRequest',
  Type.Object({ type: StringEnum(['SMS_OTP']), encryptedOtpBundle: Type.String({ minLength: 1 }) }),
);
export const OauthCredentialVerifyRequest = component(
  'OauthCredentialVerifyRequest',
  Type.Object({
    type: StringEnum(['OAUTH']),
    oidcToken: Type.String({ minLength: 1 }),
    clientPublicKey: Type.String({ pattern: PUBLIC_KEY_PATTERN }),
  }),
);
export const PasskeyAssertion = component(
  'PasskeyAssertion',
  Type.Object({
    credentialId: Type.String({ minLength: 1 }),
    clientDataJson: Type.String({ minLength: 1 }),
    authenticatorData: Type.String({ minLength: 1 }),
    signature: Type.String({ minLength: 1 }),
    userHandle: Type.Optional(Type.String()),
  }),
);
export const PasskeyCredentialVerifyRequest = component(
  'PasskeyCredentialVerifyRequest',
  Type.Object({ type: StringEnum(['PASSKEY']), assertion: Type.Ref(PasskeyAssertion) }),
);

const verifyVariants = {
  EMAIL_OTP: EmailOtpCredentialVerifyRequest,
  SMS_OTP: SmsOtpCredentialVerifyRequest,
  OAUTH: OauthCredentialVerifyRequest,
  PASSKEY: PasskeyCredentialVerifyRequest,
};

export const AuthCredentialVerifyRequestOneOf = DiscriminatedUnion(
  'type',
  Object.values(verifyVariants).map((v) => Type.Ref(v)),
  Object.fromEntries(Object.entries(verifyVariants).map(([k, v]) => [k, `#/components/schemas/${v.$id}`])),
);

export interface CredentialVerifyInput {
  type: AuthMethodType;
  encryptedOtpBundle?: string;
  oidcToken?: string;
  clientPublicKey?: string;
  assertion?: {
    credentialId: string;
    clientDataJson: string;
    authenticatorData: string;
    signature: string;
    userHandle?: string;
  };
}

export const AuthCredentialChallengeRequest = component(
  'AuthCredentialChallengeRequest',
  Type.Object({
    clientPublicKey: Type.Optional(Type.String({ pattern: PUBLIC_KEY_PATTERN, minLength: 66, maxLength: 130 })),
  }),
);

export const AuthSessionRefreshRequest = component(
  'AuthSessionRefreshRequest',
  Type.Object({ clientPublicKey: Type.String({ pattern: PUBLIC_KEY_PATTERN }) }),
);

export const DelegatedKey = component(
  'DelegatedKey',
  Type.Object({
    id: Type.String(),
    cardId: Type.String(),
    fundingSourceId: Type.String(),
    accountId: Type.String(),
    publicKey: Type.String(),
    nickname: Type.String(),
    status: StringEnum(DELEGATED_KEY_STATUSES),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
);

export const DelegatedKeyListResponse = component(
  'DelegatedKeyListResponse',
  Type.Object({ data: Type.Array(Type.Ref(DelegatedKey)) }),
);

export const DelegatedKeyCreateRequest = component(
  'DelegatedKeyCreateRequest',
  Type.Object({
    cardId: Type.String({ minLength: 1 }),
    internalAccountId: Type.String({ minLength: 1 }),
    nickname: Type.String({ minLength: 1, maxLength: 256 }),
  }),
);

export const InternalAccountUpdateRequest = component(
  'InternalAccountUpdateRequest',
  Type.Object({ privateEnabled: Type.Optional(Type.Boolean()) }),
);

export const InternalAccountExportRequest = component(
  'InternalAccountExportRequest',
  Type.Object({ clientPublicKey: Type.String({ pattern: UNCOMPRESSED_KEY_PATTERN }) }),
);

export const InternalAccountExportResponse = component(
  'InternalAccountExportResponse',
  Type.Object({ id: Type.String(), encryptedWalletCredentials: Type.String() }),
);

export const AccountIdQuery = Type.Object({ accountId: Type.String() });
export const DelegatedKeyListQuery = Type.Object({
  accountId: Type.Optional(Type.String()),
  fundingSourceId: Type.Optional(Type.String()),
});
export const IdParams = Type.Object({ id: Type.String() });

/** The headers of a signed retry (names lower-case). */
export const SignedRetryHeaders = Type.Object({
  'grid-wallet-signature': Type.Optional(Type.String()),
  'service-wallet-signature': Type.Optional(Type.String()),
  'request-id': Type.Optional(Type.String()),
});
