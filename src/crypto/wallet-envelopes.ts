// The sealed envelopes of embedded-wallet logins, built on @turnkey/crypto's HPKE (RFC 9180
// base mode: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM), the implementation the
// official clients use, so that what they seal railyard opens and what railyard seals their
// helpers open:
//
// - the OTP encryption target bundle: JSON {version, data, dataSignature, enclaveQuorumPublic}
//   where data is the hex of JSON {targetPublic, organizationId}, signed (DER ECDSA-SHA256
//   over the data bytes) by the platform's wallet signer key, whose uncompressed public key
//   is enclaveQuorumPublic. Clients pass that key to encryptOtpCodeToBundle as the signer to
//   trust, and seal {otp_code, public_key} to targetPublic.
// - the encrypted OTP attempt: JSON {encappedPublic, ciphertext}, opened with the target's
//   private key.
// - a session signing key sealed to a client key (the legacy flow): base58check of the
//   compressed encapsulated key followed by the ciphertext (decryptCredentialBundle).
// - wallet credentials sealed for export: JSON {version, data, dataSignature: '',
//   enclaveQuorumPublic: ''}, data the hex of JSON {encappedPublic, ciphertext, organizationId}.

import { bs58check } from '@turnkey/encoding';
import { onFirstUse } from '../lazy.js';

const turnkey = onFirstUse<typeof import('@turnkey/crypto')>('@turnkey/crypto');
import { normalizePoint, signDer } from './p256.js';

const BUNDLE_VERSION = 'v1.0.0';

export function otpTargetBundle(
  targetPublicUncompressed: string,
  organizationId: string,
  signer: { privateKey: string; publicKey: string },
): string {
  const data = Buffer.from(JSON.stringify({ targetPublic: targetPublicUncompressed, organizationId }), 'utf8');
  return JSON.stringify({
    version: BUNDLE_VERSION,
    data: data.toString('hex'),
    dataSignature: signDer(signer.privateKey, data).toString('hex'),
    enclaveQuorumPublic: signer.publicKey,
  });
}

export interface OtpAttempt {
  otpCode: string;
  /** The client's key (the TEK) as it sent it, hex. */
  publicKey: string;
}

/** Opens an encrypted OTP attempt; null when it is not one sealed to this target. */
export function openOtpAttempt(bundle: string, targetPrivateKey: string): OtpAttempt | { malformed: string } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bundle);
  } catch {
    return { malformed: 'is not JSON' };
  }
  const { encappedPublic, ciphertext } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof encappedPublic !== 'string' || normalizePoint(encappedPublic) === null) {
    return { malformed: 'needs encappedPublic, an uncompressed P-256 public key in hex' };
  }
  if (typeof ciphertext !== 'string' || !/^(?:[0-9a-fA-F]{2})+$/.test(ciphertext)) {
    return { malformed: 'needs ciphertext in hex' };
  }
  let plain: Uint8Array;
  try {
    plain = turnkey().hpkeDecrypt({
      ciphertextBuf: Buffer.from(ciphertext, 'hex'),
      encappedKeyBuf: Buffer.from(normalizePoint(encappedPublic)!.uncompressed, 'hex'),
      receiverPriv: targetPrivateKey,
    });
  } catch {
    return null;
  }
  let content: unknown;
  try {
    content = JSON.parse(Buffer.from(plain).toString('utf8'));
  } catch {
    return null;
  }
  const { otp_code: otpCode, public_key: publicKey } = (content ?? {}) as Record<string, unknown>;
  if (typeof otpCode !== 'string' || typeof publicKey !== 'string') return null;
  return { otpCode, publicKey };
}

/** A private key sealed to the client's uncompressed key, as decryptCredentialBundle reads it. */
export function sealSessionKey(privateKeyHex: string, clientPublicUncompressed: string): string {
  const sealed = turnkey().hpkeEncrypt({
    plainTextBuf: Buffer.from(privateKeyHex, 'hex'),
    targetKeyBuf: Buffer.from(clientPublicUncompressed, 'hex'),
  });
  // hpkeEncrypt answers the compressed encapsulated key (33 bytes) then the ciphertext.
  return bs58check.encode(sealed);
}

/** Wallet credentials sealed for export (the sandbox signs nothing: empty attestation fields). */
export function sealExport(secret: string, clientPublicUncompressed: string, organizationId: string): string {
  const sealed = turnkey().hpkeEncrypt({
    plainTextBuf: Buffer.from(secret, 'utf8'),
    targetKeyBuf: Buffer.from(clientPublicUncompressed, 'hex'),
  });
  // formatHpkeBuf spells the encapsulated key uncompressed, as the export bundle has it.
  const data = {
    ...(JSON.parse(turnkey().formatHpkeBuf(sealed)) as { encappedPublic: string; ciphertext: string }),
    organizationId,
  };
  return JSON.stringify({
    version: BUNDLE_VERSION,
    data: Buffer.from(JSON.stringify(data), 'utf8').toString('hex'),
    dataSignature: '',
    enclaveQuorumPublic: '',
  });
}
