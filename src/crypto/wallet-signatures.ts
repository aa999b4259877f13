// Verification of a wallet's signature over a text message, per network. EVM chains use
// EIP-191 personal_sign (secp256k1, keccak-256, the signer's address recovered from the
// signature); Solana uses ed25519 over the message bytes with the address as public key.

import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { base58Decode } from './base58.js';

const SIGNATURE_TEXT_MAX = 256;

/** Every reading of a signature string as bytes: hex (0x optional), base58, base64. */
function decodings(text: string): Uint8Array[] {
  const trimmed = text.trim();
  // No encoding of a 64- or 65-byte signature is longer; base58 decoding is quadratic, so a
  // long string is refused before it costs seconds.
  if (trimmed.length > SIGNATURE_TEXT_MAX) return [];
  const out: Uint8Array[] = [];
  const hex = trimmed.replace(/^0x/, '');
  if (/^[0-9a-fA-F]+$/.test(hex) && hex.length % 2 === 0) out.push(Buffer.from(hex, 'hex'));
  const base58 = base58Decode(trimmed);
  if (base58 !== null) out.push(base58);
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) && trimmed.length % 4 === 0) out.push(Buffer.from(trimmed, 'base64'));
  return out;
}

/** The EVM address (lower-case 0x…) that produced an EIP-191 signature of `message`. */
export function recoverEvmSigner(message: string, signatureText: string): string | null {
  const hex = signatureText.trim().replace(/^0x/, '');
  if (!/^[0-9a-fA-F]{130}$/.test(hex)) return null;
  const signature = Buffer.from(hex, 'hex');
  const v = signature[64]!;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return null;
  const body = Buffer.from(message, 'utf8');
  const digest = keccak_256(Buffer.concat([Buffer.from(`\x19Ethereum Signed Message:\n${body.length}`, 'utf8'), body]));
  try {
    const recovered = new Uint8Array(65);
    recovered[0] = recovery;
    recovered.set(signature.subarray(0, 64), 1);
    const publicKey = secp256k1.recoverPublicKey(recovered, digest, { prehash: false });
    const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
    return `0x${Buffer.from(keccak_256(uncompressed.subarray(1)).subarray(12)).toString('hex')}`;
  } catch {
    return null;
  }
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function verifySolanaSignature(address: string, message: string, signatureText: string): boolean {
  const publicKey = base58Decode(address);
  if (publicKey?.length !== 32) return false;
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
  } catch {
    return false;
  }
  return decodings(signatureText).some((signature) => {
    try {
      return signature.length === 64 && verifySignature(null, Buffer.from(message, 'utf8'), key, signature);
    } catch {
      return false;
    }
  });
}

export type WalletNetwork = 'EVM' | 'SOLANA' | 'OTHER';

/** Whether `signature` proves control of `address` for `message` on the network. */
export function verifyWalletSignature(
  network: WalletNetwork,
  address: string,
  message: string,
  signature: string,
): boolean {
  if (network === 'EVM') return recoverEvmSigner(message, signature) === address.toLowerCase();
  if (network === 'SOLANA') return verifySolanaSignature(address, message, signature);
  return false;
}
