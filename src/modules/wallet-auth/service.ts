import { iso } from '../../clock.js';
import { checkOidcClaims, decodeOidcToken, type OidcIdentity } from '../../crypto/oidc.js';
import { normalizePoint } from '../../crypto/p256.js';
import { type StoredPasskey, verifyPasskeyRegistration } from '../../crypto/webauthn.js';
import { isUniqueViolation, type Queryable, type Tx } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { findCustomerRow } from '../customers/lookup.js';
import { type InternalAccountView, ownerInternalAccounts } from '../internal-accounts/service.js';
import type { AuthMethodType, CredentialCreateInput } from './schemas.js';
import {
  activityPayload,
  checkRetry,
  consumeChallenge,
  isRetry,
  issueChallenge,
  type SignedHeaders,
  unauthorized,
  walletOrg,
  withType,
} from './signing.js';
import * as store from './store.js';

import {
  checkAccountIdFormat,
  invalid,
  issueOtp,
  NICKNAME,
  notFound,
  openSession,
  presentCredential,
  presentSession,
  walletAccount,
  walletUserId,
} from './wallet.js';

// ------------------------------------------------------------------------------- credentials

export async function listCredentials(ctx: Ctx, accountId: string) {
  checkAccountIdFormat(accountId);
  const rows = await store.accountCredentials(ctx.db.k, ctx.platformId, accountId);
  return { data: rows.map(presentCredential) };
}

/** The contact an OTP credential sends its codes to: the customer's email or phone number. */
async function otpContact(ctx: Ctx, q: Queryable, account: InternalAccountView, type: 'EMAIL_OTP' | 'SMS_OTP') {
  const customer =
    account.customer_id !== null ? await findCustomerRow(q, ctx.platformId, account.customer_id) : undefined;
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
      const checked = await verifyPasskeyRegistration({
        ...attestation,
        challenge,
        strict: ctx.settings.strictIdentifiers === true,
      });
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
  for (const account of await ownerInternalAccounts(tx, platformId, customerId)) {
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
    for (const account of await ownerInternalAccounts(q, ctx.platformId, customerId)) {
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
