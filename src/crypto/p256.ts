// P-256 keys as the embedded-wallet clients exchange them: hex SEC1 points (compressed
// `02`/`03` + X, or uncompressed `04` + X + Y) and hex private scalars. Point arithmetic
// comes from @noble/curves; ECDSA runs in node:crypto, which takes DER signatures with
// either S (clients' signatures are not always low-S).

import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';

const SPKI_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');
const PKCS8_PREFIX = Buffer.from('308141020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420', 'hex');

const COMPRESSED = /^0[23][0-9a-fA-F]{64}$/;
const UNCOMPRESSED = /^04[0-9a-fA-F]{128}$/;

/** True for a hex SEC1 point of either form (not yet whether it lies on the curve). */
export function isPointHex(hex: string): boolean {
  return COMPRESSED.test(hex) || UNCOMPRESSED.test(hex);
}

export function isCompressedHex(hex: string): boolean {
  return COMPRESSED.test(hex);
}

/** The point in both forms (lower-case hex), or null when it is not a point of P-256. */
export function normalizePoint(hex: string): { compressed: string; uncompressed: string } | null {
  if (!isPointHex(hex)) return null;
  try {
    const point = p256.Point.fromHex(hex.toLowerCase());
    return {
      compressed: Buffer.from(point.toBytes(true)).toString('hex'),
      uncompressed: Buffer.from(point.toBytes(false)).toString('hex'),
    };
  } catch {
    return null;
  }
}

function publicKeyObject(uncompressedHex: string): KeyObject {
  return createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, Buffer.from(uncompressedHex, 'hex')]),
    format: 'der',
    type: 'spki',
  });
}

/** ECDSA-SHA256 over `message` with a DER signature; false for anything that does not verify. */
export function verifyDer(publicKeyHex: string, message: Buffer, signatureDer: Buffer): boolean {
  const point = normalizePoint(publicKeyHex);
  if (point === null) return false;
  try {
    return verify('sha256', message, { key: publicKeyObject(point.uncompressed), dsaEncoding: 'der' }, signatureDer);
  } catch {
    return false;
  }
}

export interface KeyPair {
  /** 32-byte scalar, hex. */
  privateKey: string;
  compressed: string;
  uncompressed: string;
}

export function generateKeyPair(): KeyPair {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const jwk = privateKey.export({ format: 'jwk' });
  const scalar = Buffer.from(jwk.d!, 'base64url').toString('hex').padStart(64, '0');
  return { privateKey: scalar, ...publicKeysOf(scalar) };
}

export function publicKeysOf(privateKeyHex: string): { compressed: string; uncompressed: string } {
  const secret = Buffer.from(privateKeyHex, 'hex');
  return {
    compressed: Buffer.from(p256.getPublicKey(secret, true)).toString('hex'),
    uncompressed: Buffer.from(p256.getPublicKey(secret, false)).toString('hex'),
  };
}

/** ECDSA-SHA256 signature of `message` (DER) with a hex private scalar. */
export function signDer(privateKeyHex: string, message: Buffer): Buffer {
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, Buffer.from(privateKeyHex, 'hex')]),
    format: 'der',
    type: 'pkcs8',
  });
  return sign('sha256', message, { key, dsaEncoding: 'der' });
}
