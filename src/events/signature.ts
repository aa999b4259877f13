// Webhook signatures: ECDSA P-256 over SHA-256 of the exact body bytes, DER-encoded and
// base64, carried in X-Grid-Signature as {"v":"1","s":"<base64>"} (the header value the
// official SDKs parse). Each platform signs with its own key pair, kept in the store.

import { createPublicKey, verify } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Grid-Signature';

export { signatureHeaderValue } from './signing.js';

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
