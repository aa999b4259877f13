// Secrets railyard keeps at rest. Those it must read again (card numbers, custodied private
// keys) are sealed: AES-256-GCM under one of railyard's own keys (src/db/keys.ts), as
// iv.tag.ciphertext in base64. Those it only recognises (bearer tokens, link tokens, recovery
// codes) are kept as their SHA-256.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { sha256Hex } from './digest.js';

/** What the store keeps of a secret it only has to recognise: SHA-256 of its UTF-8 bytes, hex. */
export function secretHash(secret: string): string {
  return sha256Hex(secret);
}

export function sealText(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64')).join('.');
}

/** The plaintext of `sealed`; throws when it was not sealed under `key` or was altered. */
export function openText(key: Buffer, sealed: string): string {
  const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64'));
  const decipher = createDecipheriv('aes-256-gcm', key, iv!);
  decipher.setAuthTag(tag!);
  return Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8');
}
