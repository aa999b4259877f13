// Embedded-wallet authentication: the credentials that log into a customer's EMBEDDED_WALLET
// account (EMAIL_OTP, SMS_OTP, PASSKEY, OAUTH), the sessions a login opens, and the wallet
// actions those sessions sign (see signing.ts for the two-leg signed requests).
//
// A session holds the public half of a P-256 key; the client keeps the private half and
// stamps signed requests with it. OTP logins make the key the client sealed into its OTP
// attempt the session key. PASSKEY and OAUTH logins name the key as `clientPublicKey`: a
// compressed key is the session key itself; an uncompressed one asks for the older flow, where
// railyard makes the session key and returns it sealed to that key.

import { createHash } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { iso } from '../../clock.js';
import { checkOidcClaims, decodeOidcToken, oidcNonceFor, type OidcIdentity } from '../../crypto/oidc.js';
import { generateKeyPair, isCompressedHex, normalizePoint } from '../../crypto/p256.js';
import { openOtpAttempt, otpTargetBundle, sealSessionKey } from '../../crypto/wallet-envelopes.js';
import { type StoredPasskey, verifyPasskeyAssertion, verifyPasskeyRegistration } from '../../crypto/webauthn.js';
import { isUniqueViolation, type Queryable, type Tx } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { SANDBOX_OTP_CODE, SANDBOX_VALID_PASSKEY_SIGNATURE } from '../../sandbox/magic.js';
import { findCustomer } from '../customers/store.js';
import { findInternalAccount, type InternalAccountView } from '../internal-accounts/service.js';
import { ownerAccounts } from '../internal-accounts/store.js';
import { readPlatformConfigShared } from '../platform/service.js';
import type { AuthMethodType, CredentialCreateInput, CredentialVerifyInput } from './schemas.js';
import {
  activityPayload,
  checkRetry,
  consumeChallenge,
  isRetry,
  issueChallenge,
  pendingRequest,
  SIGNED_REQUEST_TTL_MS,
  type SignedHeaders,
  unauthorized,
  walletOrg,
  type WalletOrg,
  withType,
} from './signing.js';
import * as store from './store.js';

/** How long a session lasts (sandbox clock). */
export const SESSION_TTL_MS = 15 * 60_000;
/** How long an OTP code stays good when the platform's embeddedWalletConfig sets no expirationSeconds. */
const OTP_TTL_SECONDS_DEFAULT = 300;
/** Wrong codes one OTP challenge takes before it is spent (then 429 until a new challenge). */
const OTP_ATTEMPTS_MAX = 5;
/** What a 429 for a spent code tells the client to wait: none, really; a new challenge is what it needs. */
const OTP_RETRY_AFTER_SECONDS = 1;

function tooManyAttempts() {
  const error = apiError(
    'RATE_LIMITED',
    `This OTP code took ${OTP_ATTEMPTS_MAX} wrong attempts and is spent: request a new one with POST /auth/credentials/{id}/challenge`,
  );
  error.retryAfterSeconds = OTP_RETRY_AFTER_SECONDS;
  return error;
}

/** How long a passkey login challenge waits for its assertion. */
const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;

const ACCOUNT_ID = /^InternalAccount:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NICKNAME = /^[\p{L}\p{N} ._'()-]{1,100}$/u;

function invalid(field: string, message: string) {
  return invalidInput([{ field, message }]);
}

function notFound(what: string) {
  return apiError('REFERENCE_NOT_FOUND', `${what} not found`);
}

/** The query parameter of the auth lists: an InternalAccount id, or 400. */
function checkAccountIdFormat(accountId: string): void {
  if (!ACCOUNT_ID.test(accountId)) throw invalid('accountId', 'must be an InternalAccount id (InternalAccount:<uuid>)');
}

/** The customer's EMBEDDED_WALLET account: 404 when it is not this platform's, 400 when it is another type. */
async function walletAccount(
  ctx: Ctx,
  q: Queryable,
  accountId: string,
  field = 'accountId',
): Promise<InternalAccountView> {
  const account = await findInternalAccount(q, ctx.platformId, accountId);
  if (account === undefined) throw notFound('Internal account');
  if (account.type !== 'EMBEDDED_WALLET') throw invalid(field, 'must be an EMBEDDED_WALLET internal account');
  return account;
}

/** The wallet's user id in the payloads to sign (stable per account). */
function walletUserId(accountId: string): string {
  return `user_${createHash('sha256').update(accountId).digest('hex').slice(0, 24)}`;
}

// ------------------------------------------------------------------------------- presentation

function presentCredential(row: store.CredentialRow) {
  return {
    id: row.id,
    accountId: row.account_id,
    type: row.type as AuthMethodType,
    ...(row.credential_id !== null ? { credentialId: row.credential_id } : {}),
    nickname: row.nickname,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function presentSession(session: store.SessionRow, credential: store.CredentialRow, sealedKey?: string) {
  return {
    id: session.id,
    accountId: session.account_id,
    type: credential.type as AuthMethodType,
    ...(credential.credential_id !== null ? { credentialId: credential.credential_id } : {}),
    nickname: credential.nickname,
    createdAt: session.created_at,
    updatedAt: session.updated_at,
    ...(sealedKey !== undefined ? { encryptedSessionSigningKey: sealedKey } : {}),
    expiresAt: session.expires_at,
  };
}

// ------------------------------------------------------------------------------- credentials

export async function listCredentials(ctx: Ctx, accountId: string) {
  checkAccountIdFormat(accountId);
  const rows = await store.accountCredentials(ctx.db.k, ctx.platformId, accountId);
  return { data: rows.map(presentCredential) };
}

/** The contact an OTP credential sends its codes to: the customer's email or phone number. */
async function otpContact(ctx: Ctx, q: Queryable, account: InternalAccountView, type: 'EMAIL_OTP' | 'SMS_OTP') {
  const customer =
    account.customer_id !== null ? await findCustomer(q, ctx.platformId, account.customer_id) : undefined;
  const contact = type === 'EMAIL_OTP' ? customer?.email : customer?.phone_number;
  if (contact === null || contact === undefined || contact === '') {
    throw invalid(
      'type',
      type === 'EMAIL_OTP'
        ? "cannot be EMAIL_OTP: the wallet's customer has no email (set one with PATCH /customers/{customerId})"
        : "cannot be SMS_OTP: the wallet's customer has no phone number (set one with PATCH /customers/{customerId})",
    );
  }
  return contact;
}

interface PreparedCredential {
  type: AuthMethodType;
  nickname: string;
  credentialId?: string;
  passkey?: StoredPasskey;
  registrationChallenge?: string;
  oidc?: OidcIdentity;
  /** The activity a signed retry asks the wallet holder to approve. */
  activity: { type: string; parameters: Record<string, unknown> };
}

/** Every check of a new credential that does not depend on who signs (both legs run it). */
async function prepareCredential(
  ctx: Ctx,
  q: Queryable,
  account: InternalAccountView,
  input: CredentialCreateInput,
  existing: store.CredentialRow[],
): Promise<PreparedCredential> {
  const userId = walletUserId(account.id);
  switch (input.type) {
    case 'EMAIL_OTP':
    case 'SMS_OTP': {
      if (existing.some((c) => c.type === input.type)) {
        const message = `cannot be ${input.type}: the account already has an ${input.type} credential`;
        throw apiError(
          input.type === 'EMAIL_OTP' ? 'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS' : 'SMS_OTP_CREDENTIAL_ALREADY_EXISTS',
          `type ${message}`,
          { errors: [{ field: 'type', message }] },
        );
      }
      const contact = await otpContact(ctx, q, account, input.type);
      return input.type === 'EMAIL_OTP'
        ? {
            type: 'EMAIL_OTP',
            nickname: contact,
            activity: { type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL', parameters: { userEmail: contact, userId } },
          }
        : {
            type: 'SMS_OTP',
            nickname: contact,
            activity: {
              type: 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER',
              parameters: { userId, userPhoneNumber: contact },
            },
          };
    }
    case 'OAUTH': {
      const token = input.oidcToken!;
      const decoded = decodeOidcToken(token);
      if (decoded === null)
        throw invalid('oidcToken', 'must be a JWT: three base64url segments, header and claims JSON objects');
      const checked = checkOidcClaims(decoded.payload, ctx.now.getTime());
      if (!checked.ok) throw unauthorized('UNAUTHORIZED', checked.reason);
      const { identity } = checked;
      const same = existing.some((c) => {
        if (c.oidc_identity === null) return false;
        const known = JSON.parse(c.oidc_identity) as OidcIdentity;
        return known.iss === identity.iss && known.aud === identity.aud && known.sub === identity.sub;
      });
      if (same) throw invalid('oidcToken', 'names an identity already registered on this account');
      const provider = identity.iss.includes('apple') ? 'Apple' : 'Google';
      return {
        type: 'OAUTH',
        nickname: identity.email ?? `${provider} ${identity.sub}`,
        oidc: identity,
        activity: {
          type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS',
          parameters: { oauthProviders: [{ oidcToken: token, providerName: provider }], userId },
        },
      };
    }
    case 'PASSKEY': {
      const nickname = input.nickname!.trim();
      if (!NICKNAME.test(nickname)) {
        throw invalid(
          'nickname',
          "must be 1 to 100 letters, digits, spaces and . _ - ' ( ) once leading and trailing spaces are removed",
        );
      }
      const attestation = input.attestation!;
      const challenge = input.challenge!;
      if (await store.registrationChallengeUsed(q, ctx.platformId, challenge)) {
        throw unauthorized('UNAUTHORIZED', 'this registration challenge was already used');
      }
      const checked = await verifyPasskeyRegistration({ ...attestation, challenge });
      if (!checked.ok) throw unauthorized('UNAUTHORIZED', checked.reason);
      if (existing.some((c) => c.credential_id === checked.value.credentialId)) {
        const message = 'is already registered on this account';
        throw apiError('PASSKEY_CREDENTIAL_ALREADY_EXISTS', `attestation.credentialId ${message}`, {
          errors: [{ field: 'attestation.credentialId', message }],
        });
      }
      return {
        type: 'PASSKEY',
        nickname,
        credentialId: checked.value.credentialId,
        passkey: checked.value,
        registrationChallenge: challenge,
        activity: {
          type: 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2',
          parameters: {
            authenticators: [
              {
                attestation: {
                  attestationObject: attestation.attestationObject,
                  clientDataJson: attestation.clientDataJson,
                  credentialId: attestation.credentialId,
                },
                authenticatorName: nickname,
                challenge,
                transports: attestation.transports ?? [],
              },
            ],
            userId,
          },
        },
      };
    }
  }
}

async function insertPrepared(ctx: Ctx, tx: Tx, accountId: string, prepared: PreparedCredential) {
  const now = iso(ctx.now);
  const row: store.CredentialRow = {
    id: newId('AuthMethod'),
    platform_id: ctx.platformId,
    account_id: accountId,
    type: prepared.type,
    nickname: prepared.nickname,
    credential_id: prepared.credentialId ?? null,
    passkey: prepared.passkey !== undefined ? JSON.stringify(prepared.passkey) : null,
    registration_challenge: prepared.registrationChallenge ?? null,
    oidc_identity: prepared.oidc !== undefined ? JSON.stringify(prepared.oidc) : null,
    otp_target_key: null,
    otp_expires_at: null,
    otp_failed_attempts: 0,
    revoked_at: null,
    created_at: now,
    updated_at: now,
  };
  try {
    await store.insertCredential(tx, row);
  } catch (err) {
    // A registration with the same challenge committed since this one checked it.
    if (prepared.registrationChallenge === undefined || !isUniqueViolation(err)) throw err;
    throw unauthorized('UNAUTHORIZED', 'this registration challenge was already used');
  }
  return row;
}

/**
 * Registers a credential. The account's first one needs no signature (201 at once); any
 * later one is a signed request approved by a live session of the account (202, then 201 on
 * the retry). An OTP credential added by a signed retry comes with its first code's target.
 */
export async function createCredential(ctx: Ctx, input: CredentialCreateInput, headers: SignedHeaders) {
  const account = await walletAccount(ctx, ctx.db.k, input.accountId);
  const existing = await store.accountCredentials(ctx.db.k, ctx.platformId, account.id);
  const prepared = await prepareCredential(ctx, ctx.db.k, account, input, existing);
  const expected = { operation: 'createAuthCredential', target: account.id, body: input };

  if (existing.length === 0 && !isRetry(headers)) {
    const row = await ctx.db.transaction(async (tx) => {
      await store.lockWallet(tx, ctx.platformId, account.id);
      // Two first registrations at once: the second finds the first and must be signed.
      if ((await store.accountCredentials(tx, ctx.platformId, account.id)).length > 0) return undefined;
      return insertPrepared(ctx, tx, account.id, prepared);
    });
    if (row === undefined) return createCredential(ctx, input, headers);
    return { status: 201, body: presentCredential(row) };
  }
  if (!isRetry(headers)) {
    const org = await walletOrg(ctx);
    const challenge = await issueChallenge(ctx, ctx.db.k, {
      ...expected,
      accountId: account.id,
      payload: activityPayload(org, prepared.activity.type, prepared.activity.parameters, ctx.now),
      signer: { kind: 'session' },
    });
    return { status: 202, body: withType(challenge, prepared.type) };
  }
  const accepted = await checkRetry(ctx, headers, expected);
  const org = await walletOrg(ctx);
  const body = await ctx.db.transaction(async (tx) => {
    await consumeChallenge(ctx, tx, accepted);
    await store.lockWallet(tx, ctx.platformId, account.id);
    const now = await store.accountCredentials(tx, ctx.platformId, account.id);
    // Checked again: another credential of this type may have come in between the legs.
    const again = await prepareCredential(ctx, tx, account, input, now);
    const row = await insertPrepared(ctx, tx, account.id, again);
    if (row.type === 'EMAIL_OTP' || row.type === 'SMS_OTP') {
      const bundle = await issueOtp(ctx, tx, org, row);
      return { ...presentCredential(row), otpEncryptionTargetBundle: bundle };
    }
    return presentCredential(row);
  });
  return { status: 201, body };
}

/**
 * Gives a new customer's wallets their EMAIL_OTP credential (in the transaction that
 * creates the customer), so the customer can log in straight away. No email, no credential.
 */
export async function bootstrapWalletCredentials(
  tx: Tx,
  platformId: string,
  customerId: string,
  email: string | null,
  now: Date,
): Promise<void> {
  if (email === null || email === '') return;
  const stamp = iso(now);
  for (const account of await ownerAccounts(tx, platformId, customerId)) {
    if (account.type !== 'EMBEDDED_WALLET') continue;
    if ((await store.accountCredentials(tx, platformId, account.id)).length > 0) continue;
    await store.insertCredential(tx, {
      id: newId('AuthMethod'),
      platform_id: platformId,
      account_id: account.id,
      type: 'EMAIL_OTP',
      nickname: email,
      credential_id: null,
      passkey: null,
      registration_challenge: null,
      oidc_identity: null,
      otp_target_key: null,
      otp_expires_at: null,
      otp_failed_attempts: 0,
      revoked_at: null,
      created_at: stamp,
      updated_at: stamp,
    });
  }
}

/** Opens a new OTP code for the credential: a fresh target key; answers its bundle. */
async function issueOtp(ctx: Ctx, tx: Queryable, org: WalletOrg, credential: store.CredentialRow): Promise<string> {
  const config = await readPlatformConfigShared(tx, ctx.platformId);
  const seconds = Number(config.embeddedWalletConfig?.expirationSeconds ?? OTP_TTL_SECONDS_DEFAULT);
  const target = generateKeyPair();
  const now = iso(ctx.now);
  await store.updateCredential(tx, ctx.platformId, credential.id, {
    otp_target_key: target.privateKey,
    otp_expires_at: iso(new Date(ctx.now.getTime() + seconds * 1000)),
    otp_failed_attempts: 0,
    updated_at: now,
  });
  credential.updated_at = now;
  return otpTargetBundle(target.uncompressed, org.organizationId, org.signer);
}

/**
 * A new challenge for a credential: a new OTP code (and the bundle to seal it to) for
 * EMAIL_OTP and SMS_OTP; a WebAuthn challenge bound to `clientPublicKey` for PASSKEY.
 */
export async function challengeCredential(ctx: Ctx, id: string, body: { clientPublicKey?: string | undefined }) {
  const credential = await store.findCredential(ctx.db.k, ctx.platformId, id);
  if (credential === undefined) throw notFound('Authentication credential');
  const org = await walletOrg(ctx);
  if (credential.type === 'EMAIL_OTP' || credential.type === 'SMS_OTP') {
    const bundle = await ctx.db.transaction((tx) => issueOtp(ctx, tx, org, credential));
    return { ...presentCredential(credential), otpEncryptionTargetBundle: bundle };
  }
  if (credential.type === 'OAUTH') {
    throw invalid(
      'id',
      'names an OAUTH credential: log in with POST /auth/credentials/{id}/verify and a fresh oidcToken',
    );
  }
  if (body.clientPublicKey === undefined) {
    throw invalid('clientPublicKey', 'is required to challenge a PASSKEY credential');
  }
  if (normalizePoint(body.clientPublicKey) === null) throw invalid('clientPublicKey', 'is not a point of P-256');
  // The challenge is the digest of the session the assertion will open, key included.
  const sessionRequest = activityPayload(
    org,
    'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2',
    { targetPublicKey: body.clientPublicKey.toLowerCase(), userId: walletUserId(credential.account_id) },
    ctx.now,
  );
  const challenge = createHash('sha256').update(sessionRequest).digest('hex');
  const issued = await issueChallenge(ctx, ctx.db.k, {
    operation: 'verifyAuthCredential',
    accountId: credential.account_id,
    target: credential.id,
    body: undefined,
    payload: sessionRequest,
    signer: { kind: 'key', publicKey: '' },
    data: { clientPublicKey: body.clientPublicKey, challenge },
    ttlMs: PASSKEY_CHALLENGE_TTL_MS,
  });
  return {
    ...presentCredential(credential),
    credentialId: credential.credential_id!,
    challenge,
    requestId: issued.requestId,
    expiresAt: issued.expiresAt,
  };
}

/** Opens a session of `credential` for the client key given (see the header of this file). */
async function openSession(ctx: Ctx, tx: Tx, credential: store.CredentialRow, clientKey: string) {
  const point = normalizePoint(clientKey)!;
  let publicKey = point.compressed;
  let sealed: string | undefined;
  if (!isCompressedHex(clientKey)) {
    const sessionKey = generateKeyPair();
    publicKey = sessionKey.compressed;
    sealed = sealSessionKey(sessionKey.privateKey, point.uncompressed);
  }
  const now = iso(ctx.now);
  const session: store.SessionRow = {
    id: newId('Session'),
    platform_id: ctx.platformId,
    account_id: credential.account_id,
    credential_id: credential.id,
    public_key: publicKey,
    expires_at: iso(new Date(ctx.now.getTime() + SESSION_TTL_MS)),
    revoked_at: null,
    created_at: now,
    updated_at: now,
  };
  await store.insertSession(tx, session);
  return presentSession(session, credential, sealed);
}

/** ES256 JWT the OTP retry signs: it binds the client's key to the code just verified. */
function verificationToken(org: WalletOrg, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  const signingInput = `${part({ alg: 'ES256', typ: 'JWT' })}.${part(claims)}`;
  const signature = p256.sign(Buffer.from(signingInput, 'utf8'), Buffer.from(org.signer.privateKey, 'hex'));
  return `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
}

export async function verifyCredential(ctx: Ctx, id: string, input: CredentialVerifyInput, headers: SignedHeaders) {
  const credential = await store.findCredential(ctx.db.k, ctx.platformId, id);
  if (credential === undefined) throw notFound('Authentication credential');
  if (input.type !== credential.type) throw invalid('type', `must be ${credential.type}, the type of this credential`);
  switch (credential.type) {
    case 'EMAIL_OTP':
    case 'SMS_OTP':
      return verifyOtp(ctx, credential, input, headers);
    case 'OAUTH':
      return verifyOauth(ctx, credential, input);
    default:
      return verifyPasskey(ctx, credential, input, headers);
  }
}

async function verifyOtp(
  ctx: Ctx,
  credential: store.CredentialRow,
  input: CredentialVerifyInput,
  headers: SignedHeaders,
) {
  const expected = { operation: 'verifyAuthCredential', target: credential.id, body: input };
  if (isRetry(headers)) {
    const accepted = await checkRetry(ctx, headers, expected);
    const body = await ctx.db.transaction(async (tx) => {
      await consumeChallenge(ctx, tx, accepted);
      const current = await store.findCredential(tx, ctx.platformId, credential.id, true);
      // The code is good once: the credential's target key must still be the one the attempt was sealed to.
      if (current === undefined || current.otp_target_key !== accepted.data.targetKey) {
        throw unauthorized('UNAUTHORIZED', 'this OTP code was already used or replaced by a newer one');
      }
      await store.updateCredential(tx, ctx.platformId, credential.id, {
        otp_target_key: null,
        otp_expires_at: null,
        updated_at: iso(ctx.now),
      });
      return openSession(ctx, tx, current, accepted.data.publicKey as string);
    });
    return { status: 200, body };
  }
  if (credential.otp_target_key === null || credential.otp_expires_at === null) {
    throw unauthorized(
      'UNAUTHORIZED',
      'no OTP code is open for this credential: request one with POST /auth/credentials/{id}/challenge',
    );
  }
  if (credential.otp_expires_at <= iso(ctx.now)) {
    throw unauthorized(
      'UNAUTHORIZED',
      'the OTP code has expired: request a new one with POST /auth/credentials/{id}/challenge',
    );
  }
  const attempt = openOtpAttempt(input.encryptedOtpBundle!, credential.otp_target_key);
  if (attempt !== null && 'malformed' in attempt) throw invalid('encryptedOtpBundle', attempt.malformed);
  if (attempt === null) {
    throw unauthorized('UNAUTHORIZED', 'encryptedOtpBundle is not sealed to the current OTP encryption target');
  }
  const key = normalizePoint(attempt.publicKey);
  if (key === null) throw unauthorized('UNAUTHORIZED', 'the public_key sealed with the code is not a P-256 public key');
  if (credential.otp_failed_attempts >= OTP_ATTEMPTS_MAX) throw tooManyAttempts();
  if (attempt.otpCode !== SANDBOX_OTP_CODE) {
    // Counted, so that guessing ends: after OTP_ATTEMPTS_MAX wrong codes this one is spent.
    await store.countFailedOtp(ctx.db.k, ctx.platformId, credential.id);
    throw unauthorized('UNAUTHORIZED', 'Invalid OTP code');
  }
  const org = await walletOrg(ctx);
  const requestId = newId('Request');
  const token = verificationToken(org, {
    contact: credential.nickname,
    exp: Math.floor(credential.otp_expires_at ? Date.parse(credential.otp_expires_at) / 1000 : 0),
    id: requestId,
    organization_id: org.organizationId,
    public_key: key.compressed,
    verification_type: credential.type === 'EMAIL_OTP' ? 'OTP_TYPE_EMAIL' : 'OTP_TYPE_SMS',
  });
  const challenge = await issueChallenge(ctx, ctx.db.k, {
    ...expected,
    id: requestId,
    accountId: credential.account_id,
    payload: token,
    signer: { kind: 'key', publicKey: key.compressed },
    data: { publicKey: key.compressed, targetKey: credential.otp_target_key },
    // The retry must come while the code is still good: the challenge ends with it.
    ttlMs: Math.min(SIGNED_REQUEST_TTL_MS, Date.parse(credential.otp_expires_at) - ctx.now.getTime()),
  });
  return { status: 202, body: withType(challenge, credential.type as AuthMethodType) };
}

async function verifyOauth(ctx: Ctx, credential: store.CredentialRow, input: CredentialVerifyInput) {
  const decoded = decodeOidcToken(input.oidcToken!);
  if (decoded === null)
    throw invalid('oidcToken', 'must be a JWT: three base64url segments, header and claims JSON objects');
  const clientPublicKey = input.clientPublicKey!;
  if (normalizePoint(clientPublicKey) === null) throw invalid('clientPublicKey', 'is not a point of P-256');
  const checked = checkOidcClaims(decoded.payload, ctx.now.getTime(), {
    expectedNonce: oidcNonceFor(clientPublicKey),
    registered: JSON.parse(credential.oidc_identity!) as OidcIdentity,
  });
  if (!checked.ok) throw unauthorized('UNAUTHORIZED', checked.reason);
  const body = await ctx.db.transaction(async (tx) => {
    const current = await store.findCredential(tx, ctx.platformId, credential.id, true);
    if (current === undefined) throw notFound('Authentication credential');
    return openSession(ctx, tx, current, clientPublicKey);
  });
  return { status: 200, body };
}

async function verifyPasskey(
  ctx: Ctx,
  credential: store.CredentialRow,
  input: CredentialVerifyInput,
  headers: SignedHeaders,
) {
  if (headers.requestId === undefined) {
    throw unauthorized(
      'REQUEST_ID_MISSING',
      'a passkey login needs the Request-Id of POST /auth/credentials/{id}/challenge',
    );
  }
  const request = await pendingRequest(ctx, headers.requestId, {
    operation: 'verifyAuthCredential',
    target: credential.id,
  });
  const data = JSON.parse(request.data) as { clientPublicKey: string; challenge: string };
  const assertion = input.assertion!;
  const stored = JSON.parse(credential.passkey!) as StoredPasskey;
  // The legacy sandbox signature skips WebAuthn: no counter is read, none is checked or stored.
  let counter: number | undefined;
  if (assertion.signature === SANDBOX_VALID_PASSKEY_SIGNATURE) {
    if (assertion.credentialId.replace(/=+$/, '') !== stored.credentialId.replace(/=+$/, '')) {
      throw unauthorized('UNAUTHORIZED', 'credential id does not match');
    }
  } else {
    const checked = await verifyPasskeyAssertion(assertion, stored, data.challenge);
    if (!checked.ok) throw unauthorized('UNAUTHORIZED', checked.reason);
    counter = checked.value.newCounter;
  }
  const body = await ctx.db.transaction(async (tx) => {
    await consumeChallenge(ctx, tx, { request });
    const current = await store.findCredential(tx, ctx.platformId, credential.id, true);
    if (current === undefined) throw notFound('Authentication credential');
    const latest = JSON.parse(current.passkey!) as StoredPasskey;
    // Another login with this passkey since we read it: its counter must still be behind ours.
    if (counter !== undefined && counter !== 0 && latest.counter >= counter)
      throw unauthorized('UNAUTHORIZED', 'signature counter did not increase');
    await store.updateCredential(tx, ctx.platformId, credential.id, {
      ...(counter !== undefined ? { passkey: JSON.stringify({ ...latest, counter }) } : {}),
      updated_at: iso(ctx.now),
    });
    return openSession(ctx, tx, { ...current, updated_at: iso(ctx.now) }, data.clientPublicKey);
  });
  return { status: 200, body };
}

/** Revokes a credential (signed by a session of another credential); the last one stays. */
export async function revokeCredential(ctx: Ctx, id: string, headers: SignedHeaders) {
  const credential = await store.findCredential(ctx.db.k, ctx.platformId, id);
  if (credential === undefined) throw notFound('Authentication credential');
  const lastOne = (rows: store.CredentialRow[]) => rows.filter((c) => c.id !== id).length === 0;
  const refuseLast = () =>
    invalid('id', 'names the last credential of this account: add another before revoking this one');
  if (lastOne(await store.accountCredentials(ctx.db.k, ctx.platformId, credential.account_id))) throw refuseLast();
  const expected = { operation: 'revokeAuthCredential', target: credential.id, body: {} };
  if (!isRetry(headers)) {
    const org = await walletOrg(ctx);
    const challenge = await issueChallenge(ctx, ctx.db.k, {
      ...expected,
      accountId: credential.account_id,
      payload: activityPayload(
        org,
        'ACTIVITY_TYPE_DELETE_AUTHENTICATORS',
        { authenticatorIds: [credential.id], userId: walletUserId(credential.account_id) },
        ctx.now,
      ),
      signer: { kind: 'session', excludeCredentialId: credential.id },
    });
    return { status: 202, body: withType(challenge, credential.type as AuthMethodType) };
  }
  const accepted = await checkRetry(ctx, headers, expected);
  await ctx.db.transaction(async (tx) => {
    await consumeChallenge(ctx, tx, accepted);
    await store.lockWallet(tx, ctx.platformId, credential.account_id);
    if (lastOne(await store.accountCredentials(tx, ctx.platformId, credential.account_id))) throw refuseLast();
    const now = iso(ctx.now);
    await store.updateCredential(tx, ctx.platformId, credential.id, { revoked_at: now, updated_at: now });
    await store.revokeSessions(tx, ctx.platformId, { credentialId: credential.id }, now);
  });
  return { status: 204, body: undefined };
}

// ------------------------------------------------------------------------------- sessions

export async function listSessions(ctx: Ctx, accountId: string) {
  checkAccountIdFormat(accountId);
  const sessions = await store.liveSessions(ctx.db.k, ctx.platformId, accountId, iso(ctx.now));
  const credentials = new Map(
    (await store.accountCredentials(ctx.db.k, ctx.platformId, accountId)).map((c) => [c.id, c]),
  );
  return {
    data: sessions
      .filter((s) => credentials.has(s.credential_id))
      .map((s) => presentSession(s, credentials.get(s.credential_id)!)),
  };
}

async function liveSession(ctx: Ctx, id: string) {
  const session = await store.findLiveSession(ctx.db.k, ctx.platformId, id, iso(ctx.now));
  const credential = session && (await store.findCredential(ctx.db.k, ctx.platformId, session.credential_id));
  if (session === undefined || credential === undefined) throw notFound('Session');
  return { session, credential };
}

export async function revokeSession(ctx: Ctx, id: string, headers: SignedHeaders) {
  const { session, credential } = await liveSession(ctx, id);
  const expected = { operation: 'revokeAuthSession', target: session.id, body: {} };
  if (!isRetry(headers)) {
    const org = await walletOrg(ctx);
    const challenge = await issueChallenge(ctx, ctx.db.k, {
      ...expected,
      accountId: session.account_id,
      payload: activityPayload(
        org,
        'ACTIVITY_TYPE_DELETE_API_KEYS',
        { apiKeyIds: [session.id], userId: walletUserId(session.account_id) },
        ctx.now,
      ),
      signer: { kind: 'session' },
    });
    return { status: 202, body: withType(challenge, credential.type as AuthMethodType) };
  }
  const accepted = await checkRetry(ctx, headers, expected);
  await ctx.db.transaction(async (tx) => {
    await consumeChallenge(ctx, tx, accepted);
    await store.revokeSessions(tx, ctx.platformId, { id: session.id }, iso(ctx.now));
  });
  return { status: 204, body: undefined };
}

/** A new session in place of a live one, signed by the key of the one it replaces. */
export async function refreshSession(ctx: Ctx, id: string, body: { clientPublicKey: string }, headers: SignedHeaders) {
  const { session } = await liveSession(ctx, id);
  if (normalizePoint(body.clientPublicKey) === null) throw invalid('clientPublicKey', 'is not a point of P-256');
  const expected = { operation: 'refreshAuthSession', target: session.id, body };
  if (!isRetry(headers)) {
    const org = await walletOrg(ctx);
    const challenge = await issueChallenge(ctx, ctx.db.k, {
      ...expected,
      accountId: session.account_id,
      payload: activityPayload(
        org,
        'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2',
        { targetPublicKey: body.clientPublicKey.toLowerCase(), userId: walletUserId(session.account_id) },
        ctx.now,
      ),
      signer: { kind: 'session', sessionId: session.id },
    });
    return { status: 202, body: challenge };
  }
  const accepted = await checkRetry(ctx, headers, expected);
  const refreshed = await ctx.db.transaction(async (tx) => {
    await consumeChallenge(ctx, tx, accepted);
    const credential = await store.findCredential(tx, ctx.platformId, session.credential_id, true);
    if (credential === undefined) throw notFound('Session');
    await store.revokeSessions(tx, ctx.platformId, { id: session.id }, iso(ctx.now));
    return openSession(ctx, tx, credential, body.clientPublicKey);
  });
  return { status: 201, body: refreshed };
}

// ------------------------------------------------------------------------------- customer contact changes

/**
 * A change of a customer's email (or phone number) that its wallets log in with: the
 * EMAIL_OTP (SMS_OTP) credentials of its wallets must change with it, so the wallet holder
 * signs the change. Answers what the update must do: nothing more (no such credential), a
 * 202 to answer, or the checked retry and the credentials to rename in its transaction.
 */
export async function contactChangeStep(
  ctx: Ctx,
  customerId: string,
  change: { email?: string | undefined; phoneNumber?: string | undefined },
  body: unknown,
  headers: SignedHeaders,
): Promise<
  { kind: 'none' } | { kind: 'challenge'; body: unknown } | { kind: 'signed'; finish: (tx: Tx) => Promise<void> }
> {
  const tied = async (q: Queryable, type: 'EMAIL_OTP' | 'SMS_OTP') => {
    const out: store.CredentialRow[] = [];
    for (const account of await ownerAccounts(q, ctx.platformId, customerId)) {
      if (account.type !== 'EMBEDDED_WALLET') continue;
      out.push(...(await store.accountCredentials(q, ctx.platformId, account.id)).filter((c) => c.type === type));
    }
    return out;
  };
  const emailTied = change.email !== undefined ? await tied(ctx.db.k, 'EMAIL_OTP') : [];
  const phoneTied = change.phoneNumber !== undefined ? await tied(ctx.db.k, 'SMS_OTP') : [];
  const changing = change.email !== undefined || change.phoneNumber !== undefined;
  // A signed retry whose credentials are all gone since its challenge still answers for them.
  if (emailTied.length === 0 && phoneTied.length === 0 && !(changing && isRetry(headers))) return { kind: 'none' };
  if (change.email !== undefined && change.phoneNumber !== undefined) {
    throw invalidInput([
      { field: 'email', message: "changes a wallet's login: change email and phoneNumber in separate requests" },
      { field: 'phoneNumber', message: "changes a wallet's login: change email and phoneNumber in separate requests" },
    ]);
  }
  const type = change.email !== undefined ? 'EMAIL_OTP' : 'SMS_OTP';
  const credentials = type === 'EMAIL_OTP' ? emailTied : phoneTied;
  const value = (type === 'EMAIL_OTP' ? change.email : change.phoneNumber)!;
  const expected = { operation: 'updateCustomerById', target: customerId, body };
  const ids = credentials.map((c) => c.id).sort();
  if (!isRetry(headers)) {
    const accountId = credentials[0]!.account_id;
    const org = await walletOrg(ctx);
    const userId = walletUserId(accountId);
    const challenge = await issueChallenge(ctx, ctx.db.k, {
      ...expected,
      accountId,
      payload: activityPayload(
        org,
        type === 'EMAIL_OTP' ? 'ACTIVITY_TYPE_UPDATE_USER_EMAIL' : 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER',
        type === 'EMAIL_OTP' ? { userEmail: value, userId } : { userId, userPhoneNumber: value },
        ctx.now,
      ),
      signer: { kind: 'session' },
      data: { credentialIds: ids },
    });
    return { kind: 'challenge', body: challenge };
  }
  const accepted = await checkRetry(ctx, headers, expected);
  return {
    kind: 'signed',
    finish: async (tx) => {
      await consumeChallenge(ctx, tx, accepted);
      const now = (await tied(tx, type)).map((c) => c.id).sort();
      if (JSON.stringify(now) !== JSON.stringify(accepted.data.credentialIds)) {
        throw apiError(
          'EMAIL_OTP_CREDENTIAL_SET_CHANGED',
          'The wallet credentials this change applies to changed after the challenge was issued; start again',
        );
      }
      for (const id of now) {
        await store.updateCredential(tx, ctx.platformId, id, { nickname: value, updated_at: iso(ctx.now) });
      }
    },
  };
}
