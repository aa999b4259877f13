// Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP): HMAC-SHA1, 30-second steps,
// six digits, the parameters every authenticator app uses by default; and the RFC 4648
// base32 alphabet their provisioning URIs carry the secret in.

import { createHmac, timingSafeEqual } from 'node:crypto';

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** RFC 4226: the `digits`-digit code of `counter` under `secret`. */
export function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(binary).padStart(digits, '0');
}

/** RFC 6238: the code for the step holding `atMs`. */
export function totp(secret: Uint8Array, atMs: number, digits = TOTP_DIGITS): string {
  return hotp(secret, Math.floor(atMs / 1000 / TOTP_STEP_SECONDS), digits);
}

/**
 * The time step `code` is the code of: the step at `atMs` or one either side (clock drift);
 * null when it is none of them. A verifier keeps the step it accepted and refuses it (and
 * earlier ones) afterwards, so a code is good once (RFC 6238, section 5.2).
 */
export function verifyTotp(secret: Uint8Array, code: string, atMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const step = Math.floor(atMs / 1000 / TOTP_STEP_SECONDS);
  let matched: number | null = null;
  for (const drift of [-1, 0, 1]) {
    const expected = Buffer.from(hotp(secret, step + drift));
    if (timingSafeEqual(expected, Buffer.from(code))) matched = step + drift;
  }
  return matched;
}

/** The otpauth:// provisioning URI an authenticator app scans. */
export function totpUri(secret: Uint8Array, issuer: string, account: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({
    secret: base32Encode(secret),
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}
