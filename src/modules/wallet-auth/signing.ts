// Signed wallet requests. An embedded-wallet action that needs the wallet holder's consent
// runs in two legs: the first call (no signature headers) stores a pending challenge and
// answers 202 with `payloadToSign`, `requestId` and `expiresAt`; the retry carries the same
// body plus `Grid-Wallet-Signature` (an API-key stamp over payloadToSign) and `Request-Id`.
// A challenge is good once, for the operation, target and body it was issued for, until it
// expires on the sandbox clock, and only when signed by the key its signer rule allows.
// Every refusal here happens before anything changes.

import { createHash } from 'node:crypto';
import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { canonical } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { apiError, type ErrorCode } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { generateKeyPair } from '../../crypto/p256.js';
import { parseStamp, stampSigns } from '../../crypto/stamp.js';
import { SANDBOX_VALID_SIGNATURE } from '../../rails/magic.js';
import type { AuthMethodType } from './schemas.js';
import * as store from './store.js';

/** How long a signed-request challenge waits for its retry (sandbox clock). */
export const SIGNED_REQUEST_TTL_MS = 5 * 60_000;

/** Who may sign a challenge. */
export type Signer =
  /** The key of a live session of the account (not one opened by `excludeCredentialId`; only `sessionId` when given). */
  | { kind: 'session'; excludeCredentialId?: string; sessionId?: string }
  /** One given key (the client's OTP login key): compressed hex. */
  | { kind: 'key'; publicKey: string };

export interface SignedHeaders {
  signature?: string | undefined;
  requestId?: string | undefined;
}

/** The signature and Request-Id headers of a request (the older header name counts too). */
export function signedHeaders(headers: Record<string, string | string[] | undefined>): SignedHeaders {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  return {
    signature: first(headers['grid-wallet-signature']) ?? first(headers['service-wallet-signature']),
    requestId: first(headers['request-id']),
  };
}

export function isRetry(headers: SignedHeaders): boolean {
  return headers.signature !== undefined || headers.requestId !== undefined;
}

export function unauthorized(code: Extract<ErrorCode, string>, reason: string) {
  return apiError(code, `Wallet authentication failed: ${reason}`, { reason });
}

// ------------------------------------------------------------------------------- the wallet org

export interface WalletOrg {
  organizationId: string;
  signer: { privateKey: string; publicKey: string };
}

/**
 * The platform's wallet organization: its id (named in every payload to sign) and the key
 * that signs its OTP encryption targets. Made on first use.
 */
export async function walletOrg(ctx: Ctx, q: Queryable = ctx.db.k): Promise<WalletOrg> {
  let row = await store.findOrg(q, ctx.platformId);
  if (row === undefined) {
    const key = generateKeyPair();
    const digest = createHash('sha256').update(ctx.platformId).digest('hex');
    await store.insertOrg(q, {
      platform_id: ctx.platformId,
      organization_id: `org_${digest.slice(0, 24)}`,
      signer_private_key: key.privateKey,
      signer_public_key: key.uncompressed,
      created_at: iso(ctx.now),
    });
    row = (await store.findOrg(q, ctx.platformId))!;
  }
  return {
    organizationId: row.organization_id,
    signer: { privateKey: row.signer_private_key, publicKey: row.signer_public_key },
  };
}

/**
 * A payload to sign: the activity JSON the wallet's signer would be asked to approve, its
 * keys in sorted order, so the text is canonical.
 */
export function activityPayload(org: WalletOrg, type: string, parameters: Record<string, unknown>, now: Date): string {
  return JSON.stringify(
    canonical({ organizationId: org.organizationId, parameters, timestampMs: String(now.getTime()), type }),
  );
}

export function bodyHash(body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(body ?? {})))
    .digest('hex');
}

// ------------------------------------------------------------------------------- first leg

export interface ChallengeSpec {
  /** The Request id, when the payload must name it; a new one otherwise. */
  id?: string;
  operation: string;
  accountId: string;
  target: string;
  body: unknown;
  payload: string;
  signer: Signer;
  data?: Record<string, unknown>;
  ttlMs?: number;
}

/** Stores the pending challenge; answers the 202 body (without `type`, which some variants add). */
export async function issueChallenge(ctx: Ctx, q: Queryable, spec: ChallengeSpec) {
  const id = spec.id ?? newId('Request');
  const expiresAt = iso(new Date(ctx.now.getTime() + (spec.ttlMs ?? SIGNED_REQUEST_TTL_MS)));
  await store.insertRequest(q, {
    id,
    platform_id: ctx.platformId,
    account_id: spec.accountId,
    operation: spec.operation,
    target: spec.target,
    body_hash: bodyHash(spec.body),
    payload: spec.payload,
    signer: JSON.stringify(spec.signer),
    data: JSON.stringify(spec.data ?? {}),
    expires_at: expiresAt,
    used_at: null,
    created_at: iso(ctx.now),
  });
  return { payloadToSign: spec.payload, requestId: id, expiresAt };
}

// ------------------------------------------------------------------------------- the retry

export interface AcceptedRetry {
  request: store.RequestRow;
  data: Record<string, unknown>;
  /** The session whose key signed (absent for a key signer or the legacy value). */
  sessionId?: string | undefined;
  signerKey?: string | undefined;
}

/**
 * Checks a signed retry against its pending challenge: the headers, the challenge (this
 * operation and target, unused, unexpired), the body, and the stamp. Changes nothing; the
 * caller uses the challenge with `consumeChallenge` in the transaction that does the work.
 */
export async function checkRetry(
  ctx: Ctx,
  headers: SignedHeaders,
  expected: { operation: string; target: string; body: unknown },
): Promise<AcceptedRetry> {
  if (headers.signature === undefined) {
    throw unauthorized('WALLET_SIGNATURE_MISSING', 'the retry carries Request-Id but no Grid-Wallet-Signature');
  }
  if (headers.requestId === undefined) {
    throw unauthorized('REQUEST_ID_MISSING', 'the signed retry needs the Request-Id of the 202 it answers');
  }
  const request = await pendingRequest(ctx, headers.requestId, expected);
  if (request.body_hash !== bodyHash(expected.body)) {
    throw unauthorized(
      'WALLET_SIGNATURE_BODY_MISMATCH',
      'the retry body differs from the body the challenge was issued for',
    );
  }
  const signed = await checkStamp(
    ctx,
    headers.signature,
    request.payload,
    request.account_id,
    JSON.parse(request.signer),
  );
  return { request, data: JSON.parse(request.data) as Record<string, unknown>, ...signed };
}

/** The pending, unused, unexpired challenge `requestId` names for this operation and target. */
export async function pendingRequest(
  ctx: Ctx,
  requestId: string,
  expected: { operation: string; target: string },
): Promise<store.RequestRow> {
  const request = await store.findRequest(ctx.db.k, ctx.platformId, requestId);
  if (request === undefined || request.operation !== expected.operation || request.target !== expected.target) {
    throw unauthorized('UNAUTHORIZED', 'Request-Id does not match a pending challenge of this request');
  }
  if (request.used_at !== null) throw unauthorized('UNAUTHORIZED', 'this Request-Id was already used');
  if (request.expires_at <= iso(ctx.now))
    throw unauthorized('UNAUTHORIZED', 'the challenge of this Request-Id has expired');
  return request;
}

/** Uses the challenge inside the transaction that does the work; a second use is refused. */
export async function consumeChallenge(ctx: Ctx, tx: Tx, accepted: { request: store.RequestRow }): Promise<void> {
  if (!(await store.useRequest(tx, ctx.platformId, accepted.request.id, iso(ctx.now)))) {
    throw unauthorized('UNAUTHORIZED', 'this Request-Id was already used');
  }
}

/**
 * Verifies a stamp over `payload` by a key `signer` allows for `accountId`. The sandbox's
 * legacy value `sandbox-valid-signature` skips the cryptographic check.
 */
export async function checkStamp(
  ctx: Ctx,
  header: string | undefined,
  payload: string,
  accountId: string,
  signer: Signer,
): Promise<{ sessionId?: string; signerKey?: string }> {
  if (header === undefined || header.trim() === '') {
    throw unauthorized('WALLET_SIGNATURE_MISSING', 'Grid-Wallet-Signature is required for this wallet action');
  }
  if (header.trim() === SANDBOX_VALID_SIGNATURE) {
    // The legacy value stands in for the signature only: the wallet must still have a live session.
    if (
      signer.kind === 'session' &&
      (await store.liveSessions(ctx.db.k, ctx.platformId, accountId, iso(ctx.now))).length === 0
    ) {
      throw unauthorized('WALLET_SIGNATURE_INVALID', 'the wallet has no live session to sign with');
    }
    return {};
  }
  const stamp = parseStamp(header);
  if ('malformed' in stamp)
    throw unauthorized('WALLET_SIGNATURE_MALFORMED', `Grid-Wallet-Signature: ${stamp.malformed}`);
  let sessionId: string | undefined;
  if (signer.kind === 'key') {
    if (stamp.publicKey !== signer.publicKey) {
      throw unauthorized('WALLET_SIGNATURE_INVALID', 'the stamp is not signed by the key this challenge was issued to');
    }
  } else {
    const sessions = await store.liveSessions(ctx.db.k, ctx.platformId, accountId, iso(ctx.now));
    const session = sessions.find(
      (s) =>
        s.public_key === stamp.publicKey &&
        (signer.sessionId === undefined || s.id === signer.sessionId) &&
        (signer.excludeCredentialId === undefined || s.credential_id !== signer.excludeCredentialId),
    );
    if (session === undefined) {
      const reason =
        signer.sessionId !== undefined
          ? 'the stamp is not signed by the key of this session'
          : signer.excludeCredentialId !== undefined
            ? 'the stamp is not signed by a live session of another credential of this wallet'
            : 'the stamp is not signed by the key of a live session of this wallet';
      throw unauthorized('WALLET_SIGNATURE_INVALID', reason);
    }
    sessionId = session.id;
  }
  if (!stampSigns(stamp, payload)) {
    throw unauthorized('WALLET_SIGNATURE_INVALID', 'the signature does not verify over payloadToSign');
  }
  return { ...(sessionId !== undefined ? { sessionId } : {}), signerKey: stamp.publicKey };
}

/** The `type` a 202 of the auth endpoints names. */
export function withType<T extends object>(body: T, type: AuthMethodType) {
  return { ...body, type };
}
