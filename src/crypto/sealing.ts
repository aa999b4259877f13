// Secrets railyard keeps at rest (card numbers, custodied private keys): AES-256-GCM under
// one of railyard's own keys (src/db/keys.ts). The sealed form is iv.tag.ciphertext, base64.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

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
