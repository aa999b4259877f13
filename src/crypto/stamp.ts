// The wallet signature header (`Grid-Wallet-Signature`, formerly `Service-Wallet-Signature`):
// an API-key stamp, base64url of the JSON {publicKey, scheme, signature} that
// @turnkey/api-key-stamper produces, where `signature` is a hex DER ECDSA-SHA256 signature
// of the exact payload string by the P-256 key `publicKey` (compressed hex). The stamp
// names its key; whether that key may sign is for the caller to decide.

import { normalizePoint, verifyDer } from './p256.js';

export const STAMP_SCHEME = 'SIGNATURE_SCHEME_TK_API_P256';

export interface Stamp {
  /** Compressed hex of the key the stamp claims to be signed with. */
  publicKey: string;
  signature: Buffer;
}

/** The stamp, or the reason it cannot be read. */
export function parseStamp(header: string): Stamp | { malformed: string } {
  const text = header.trim();
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(text)) return { malformed: 'the header is not base64url' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return { malformed: 'the header does not decode to JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { malformed: 'the header does not decode to a JSON object' };
  }
  const { publicKey, scheme, signature } = parsed as Record<string, unknown>;
  if (scheme !== STAMP_SCHEME) return { malformed: `scheme must be ${STAMP_SCHEME}` };
  if (typeof publicKey !== 'string') return { malformed: 'publicKey is missing' };
  const point = normalizePoint(publicKey);
  if (point === null) return { malformed: 'publicKey is not a P-256 public key in hex' };
  if (typeof signature !== 'string' || !/^(?:[0-9a-fA-F]{2})+$/.test(signature)) {
    return { malformed: 'signature is not hex' };
  }
  return { publicKey: point.compressed, signature: Buffer.from(signature, 'hex') };
}

/** True when the stamp's signature of `payload` verifies under its own key. */
export function stampSigns(stamp: Stamp, payload: string): boolean {
  return verifyDer(stamp.publicKey, Buffer.from(payload, 'utf8'), stamp.signature);
}
