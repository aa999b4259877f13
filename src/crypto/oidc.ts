// Sandbox checks of the OIDC ID tokens that embedded-wallet OAuth credentials carry. The
// sandbox never verifies a signature (any signature segment is accepted); it only reads the
// token's shape and its claims: who issued it, for which client, about which user, when, and
// (on verify) the nonce binding it to the client's public key.

import { createHash } from 'node:crypto';

/** Issuers the sandbox accepts, compared exactly (Google issues both spellings of its own). */
export const OIDC_ISSUERS: readonly string[] = [
  'https://accounts.google.com',
  'accounts.google.com',
  'https://appleid.apple.com',
];

export interface OidcIdentity {
  iss: string;
  aud: string;
  sub: string;
  email?: string | undefined;
}

/** A base64url segment without padding; a length of 4n+1 characters encodes no whole byte. */
const BASE64URL = /^[A-Za-z0-9_-]*$/;

function isBase64url(segment: string): boolean {
  return BASE64URL.test(segment) && segment.length % 4 !== 1;
}

/** The JSON object a non-empty base64url segment holds, or null. */
function decodeJsonObject(segment: string): Record<string, unknown> | null {
  if (segment === '' || !isBase64url(segment)) return null;
  let value: unknown;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(segment, 'base64url'));
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  return value as Record<string, unknown>;
}

/**
 * Decodes a JWT-shaped token (three dot-separated base64url segments; header and payload JSON objects). Returns null
 * when it is not JWT-shaped (caller answers 400 naming the field). The signature segment is not checked beyond its
 * alphabet (base64url characters, any length, possibly empty).
 */
export function decodeOidcToken(
  token: string,
): { header: Record<string, unknown>; payload: Record<string, unknown> } | null {
  if (typeof token !== 'string') return null;
  const segments = token.split('.');
  if (segments.length !== 3) return null;
  const [headerSegment, payloadSegment, signatureSegment] = segments as [string, string, string];
  if (!BASE64URL.test(signatureSegment)) return null;
  const header = decodeJsonObject(headerSegment);
  if (header === null) return null;
  const payload = decodeJsonObject(payloadSegment);
  if (payload === null) return null;
  return { header, payload };
}

export type OidcCheck = { ok: true; identity: OidcIdentity } | { ok: false; reason: string };

/** How far back an iat may be (60 s) plus the clock skew allowed either way (5 s), in ms. */
const MAX_AGE_MS = 60_000;
const CLOCK_SKEW_MS = 5_000;

function fail(reason: string): OidcCheck {
  return { ok: false, reason };
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * Claim checks at `nowMs` (the sandbox clock's now, ms): iss one of OIDC_ISSUERS; aud a non-empty string or an array
 * of exactly one non-empty string (the identity's aud is that string); sub a non-empty string; iat a number, not more
 * than 60 s before now (5 s of clock skew allowed, so iat >= now-65s) and not more than 5 s in the future; exp a number
 * later than now. When `expectedNonce` is given (verify), the payload's `nonce` must equal it; when `registered` is
 * given, iss/aud/sub must equal it (exactly: the two spellings of Google's issuer are different identities).
 * email: the payload's email claim when it is a string.
 */
export function checkOidcClaims(
  payload: Record<string, unknown>,
  nowMs: number,
  options: { expectedNonce?: string; registered?: OidcIdentity } = {},
): OidcCheck {
  const { iss, aud, sub, iat, exp, nonce, email } = payload;

  if (iss === undefined || iss === null) return fail('token issuer missing');
  if (typeof iss !== 'string' || !OIDC_ISSUERS.includes(iss)) return fail('unsupported token issuer');

  let audience: string;
  if (isNonEmptyString(aud)) audience = aud;
  else if (Array.isArray(aud) && aud.length === 1 && isNonEmptyString(aud[0])) audience = aud[0];
  else if (Array.isArray(aud) && aud.length > 1) return fail('token audience has more than one value');
  else return fail('token audience missing');

  if (!isNonEmptyString(sub)) return fail('token subject missing');

  if (!isNumber(iat)) return fail('token iat is not a number');
  if (iat * 1000 < nowMs - MAX_AGE_MS - CLOCK_SKEW_MS) return fail('token issued more than 60 seconds ago');
  if (iat * 1000 > nowMs + CLOCK_SKEW_MS) return fail('token issued in the future');

  if (!isNumber(exp)) return fail('token exp is not a number');
  if (exp * 1000 <= nowMs) return fail('token expired');

  if (options.expectedNonce !== undefined) {
    if (nonce === undefined || nonce === null) return fail('token nonce missing');
    if (nonce !== options.expectedNonce) return fail('token nonce does not match sha256 of clientPublicKey');
  }

  const registered = options.registered;
  if (registered !== undefined && (registered.iss !== iss || registered.aud !== audience || registered.sub !== sub)) {
    return fail('token identity does not match the registered credential');
  }

  const identity: OidcIdentity = { iss, aud: audience, sub };
  if (typeof email === 'string') identity.email = email;
  return { ok: true, identity };
}

/** sha256 hex of the exact clientPublicKey string (UTF-8), the nonce a verify token must carry. */
export function oidcNonceFor(clientPublicKey: string): string {
  return createHash('sha256').update(clientPublicKey, 'utf8').digest('hex');
}
