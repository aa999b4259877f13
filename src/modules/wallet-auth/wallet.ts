// What the wallet-auth operations share: the wallet account and its checks, how credentials
// and sessions are presented, opening an OTP code, and opening a session.
//
// A session holds the public half of a P-256 key; the client keeps the private half and
// stamps signed requests with it. OTP logins make the key the client sealed into its OTP
// attempt the session key. PASSKEY and OAUTH logins name the key as `clientPublicKey`: a
// compressed key is the session key itself; an uncompressed one asks for the older flow, where
// railyard makes the session key and returns it sealed to that key.

import { createHash } from 'node:crypto';
import { iso } from '../../clock.js';
import { generateKeyPair, isCompressedHex, normalizePoint } from '../../crypto/p256.js';
import { otpTargetBundle, sealSessionKey } from '../../crypto/wallet-envelopes.js';
import type { Queryable, Tx } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { findInternalAccount, type InternalAccountView } from '../internal-accounts/service.js';
import { readPlatformConfigShared } from '../platform/config.js';
import type { AuthMethodType } from './schemas.js';
import type { WalletOrg } from './signing.js';
import * as store from './store.js';

/** How long a session lasts (sandbox clock). */
export const SESSION_TTL_MS = 15 * 60_000;
/** How long an OTP code stays good when the platform's embeddedWalletConfig sets no expirationSeconds. */
const OTP_TTL_SECONDS_DEFAULT = 300;
export const ACCOUNT_ID = /^InternalAccount:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const NICKNAME = /^[\p{L}\p{N} ._'()-]{1,100}$/u;

export function invalid(field: string, message: string) {
  return invalidInput([{ field, message }]);
}

export function notFound(what: string) {
  return apiError('REFERENCE_NOT_FOUND', `${what} not found`);
}

/** The query parameter of the auth lists: an InternalAccount id, or 400. */
export function checkAccountIdFormat(accountId: string): void {
  if (!ACCOUNT_ID.test(accountId)) throw invalid('accountId', 'must be an InternalAccount id (InternalAccount:<uuid>)');
}

/** The customer's EMBEDDED_WALLET account: 404 when it is not this platform's, 400 when it is another type. */
export async function walletAccount(
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
export function walletUserId(accountId: string): string {
  return `user_${createHash('sha256').update(accountId).digest('hex').slice(0, 24)}`;
}

// ------------------------------------------------------------------------------- presentation

export function presentCredential(row: store.CredentialRow) {
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

export function presentSession(session: store.SessionRow, credential: store.CredentialRow, sealedKey?: string) {
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

/** Opens a new OTP code for the credential: a fresh target key; answers its bundle. */
export async function issueOtp(
  ctx: Ctx,
  tx: Queryable,
  org: WalletOrg,
  credential: store.CredentialRow,
): Promise<string> {
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

/** Opens a session of `credential` for the client key given (see the header of this file). */
export async function openSession(ctx: Ctx, tx: Tx, credential: store.CredentialRow, clientKey: string) {
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
