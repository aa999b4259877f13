// Logging in: a new challenge for a credential (an OTP code, or a WebAuthn challenge bound to
// the session key to be), and its verification, which opens a session. OTP verification is a
// signed request in two legs (signing.ts); OAUTH and PASSKEY verify in one call.

import { createHash } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { iso } from '../../clock.js';
import { checkOidcClaims, decodeOidcToken, oidcNonceFor, type OidcIdentity } from '../../crypto/oidc.js';
import { normalizePoint } from '../../crypto/p256.js';
import { openOtpAttempt } from '../../crypto/wallet-envelopes.js';
import { type StoredPasskey, verifyPasskeyAssertion } from '../../crypto/webauthn.js';
import type { Ctx } from '../../http/context.js';
import { apiError } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { SANDBOX_OTP_CODE, SANDBOX_VALID_PASSKEY_SIGNATURE } from '../../rails/magic.js';
import type { AuthMethodType, CredentialVerifyInput } from './schemas.js';
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
import { invalid, issueOtp, notFound, openSession, presentCredential, walletUserId } from './wallet.js';

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
    const checked = await verifyPasskeyAssertion(assertion, stored, data.challenge, {
      strict: ctx.settings.strictIdentifiers === true,
    });
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
