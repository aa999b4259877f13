// Signing a webhook's body: ECDSA P-256 over SHA-256 of its exact bytes, DER-encoded and
// base64, as the X-Grid-Signature value {"v":"1","s":"<base64>"}. Plain JavaScript (typed by
// signing.d.ts) because the webhook sender's thread (send-worker.js) signs too, and that
// thread's file is loaded by path, without TypeScript.

import { createPrivateKey, sign } from 'node:crypto';

// Parsing a PEM key costs more than signing with it; keys never change, so keep them.
const KEYS = new Map();
const KEYS_CACHED_MAX = 1000;

function privateKey(pem) {
  let key = KEYS.get(pem);
  if (key === undefined) {
    key = createPrivateKey(pem);
    if (KEYS.size >= KEYS_CACHED_MAX) KEYS.clear();
    KEYS.set(pem, key);
  }
  return key;
}

/** The X-Grid-Signature value for `body`, signed with the platform's private key (PEM). */
export function signatureHeaderValue(privateKeyPem, body) {
  const signature = sign('sha256', body, { key: privateKey(privateKeyPem), dsaEncoding: 'der' });
  return JSON.stringify({ v: '1', s: signature.toString('base64') });
}
