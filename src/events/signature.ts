// Webhook signatures: ECDSA P-256 over SHA-256 of the exact body bytes, DER-encoded and
// base64, carried in X-Grid-Signature as {"v":"1","s":"<base64>"} (the header value the
// official SDKs parse). Each platform signs with its own key pair, kept in the store.

import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Grid-Signature';

// Parsing a PEM key costs more than signing with it; keys never change, so keep them.
const KEYS = new Map<string, KeyObject>();
const keysCachedMax = 1000;

function privateKey(pem: string): KeyObject {
  let key = KEYS.get(pem);
  if (key === undefined) {
    key = createPrivateKey(pem);
    if (KEYS.size >= keysCachedMax) KEYS.clear();
    KEYS.set(pem, key);
  }
  return key;
}

/** The X-Grid-Signature value for `body`, signed with the platform's private key (PEM). */
export function signatureHeaderValue(privateKeyPem: string, body: Buffer): string {
  const signature = sign('sha256', body, { key: privateKey(privateKeyPem), dsaEncoding: 'der' });
  return JSON.stringify({ v: '1', s: signature.toString('base64') });
}

/** Checks a header value against a body as a receiver would (also accepts bare base64). */
export function verifySignatureHeader(publicKeyPem: string, body: Buffer, headerValue: string): boolean {
  let encoded = headerValue;
  try {
    const parsed = JSON.parse(headerValue) as { v?: string; s?: string };
    if (typeof parsed.s === 'string') encoded = parsed.s;
  } catch {
    // Not JSON: the value is the signature itself.
  }
  return verify(
    'sha256',
    body,
    { key: createPublicKey(publicKeyPem), dsaEncoding: 'der' },
    Buffer.from(encoded, 'base64'),
  );
}
