// Checks of identifier formats that a pattern cannot express: check digits and address
// encodings. Each returns null when the value is acceptable, or a message for the client.
// The reference states none of them, so they are strict rules (StrictRules in
// http/schemas.ts), applied only for platforms in strict mode; but the Spark address shape,
// which the sandbox docs say the hosted service checks.

import { createHash } from 'node:crypto';
import { base58Decode } from '../../crypto/base58.js';
import { defineFormat } from '../../http/schemas.js';

/** The remainder mod 97 of an IBAN-style string, letters counted as 10..35. */
function mod97(text: string): number {
  let remainder = 0;
  for (const char of text.toUpperCase()) {
    const digits = /[0-9]/.test(char) ? char : String(char.charCodeAt(0) - 55);
    for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder;
}

/** ISO 13616 IBAN: the rearranged number (BBAN first) must leave remainder 1 mod 97. */
export function checkIban(iban: string): string | null {
  if (!/^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$/.test(iban)) return 'is not a well-formed IBAN';
  return mod97(iban.slice(4) + iban.slice(0, 4)) === 1 ? null : 'has invalid IBAN check digits';
}

/** The two check digits that make `country + digits + bban` a valid IBAN. */
export function ibanCheckDigits(country: string, bban: string): string {
  return String(98 - mod97(`${bban}${country}00`)).padStart(2, '0');
}

/** ABA routing number: weights 3, 7, 1 over the nine digits must sum to a multiple of 10. */
export function checkAbaRouting(routing: string): string | null {
  if (!/^[0-9]{9}$/.test(routing)) return 'must be 9 digits';
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  const sum = weights.reduce((acc, weight, i) => acc + weight * Number(routing[i]), 0);
  return sum % 10 === 0 ? null : 'is not a valid ABA routing number (check digit mismatch)';
}

/** The 18th digit of a CLABE: weights 3, 7, 1 over the first 17 digits, products mod 10. */
export function clabeCheckDigit(first17: string): number {
  const weights = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (Number(first17[i]) * weights[i % 3]!) % 10;
  return (10 - (sum % 10)) % 10;
}

export function checkClabe(clabe: string): string | null {
  if (!/^[0-9]{18}$/.test(clabe)) return 'must be 18 digits';
  return clabeCheckDigit(clabe.slice(0, 17)) === Number(clabe[17])
    ? null
    : 'is not a valid CLABE (check digit mismatch)';
}

/** EVM chains (Ethereum, Base, Polygon, Plasma): 0x followed by 20 bytes of hex. */
export function checkEvmAddress(address: string): string | null {
  return /^0x[0-9a-fA-F]{40}$/.test(address) ? null : 'must be 0x followed by 40 hexadecimal characters';
}

/** Solana: a base58 encoding of a 32-byte public key. */
export function checkSolanaAddress(address: string): string | null {
  const bytes = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address) ? base58Decode(address) : null;
  return bytes?.length === 32 ? null : 'must be a base58-encoded 32-byte Solana public key';
}

/** Tron: base58check of 0x41 + 20 bytes, so it starts with T and carries a 4-byte checksum. */
export function checkTronAddress(address: string): string | null {
  const bytes = /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address) ? base58Decode(address) : null;
  if (bytes?.length !== 25 || bytes[0] !== 0x41) return 'must be a base58check Tron address starting with T';
  const payload = bytes.subarray(0, 21);
  const digest = createHash('sha256').update(createHash('sha256').update(payload).digest()).digest();
  return digest.subarray(0, 4).equals(bytes.subarray(21)) ? null : 'has an invalid Tron address checksum';
}

const BECH32_CHARSET = /^[qpzry9x8gf2tvdw0s3jn54khce6mua7l]+$/;
const SPARK_PREFIXES = ['spark', 'sparkrt', 'sparkt', 'sparks', 'sparkl'];

/**
 * Spark: a bech32m string with a Spark network prefix. The checksum is deliberately not
 * verified, so testers can end an address with the sandbox's magic digits.
 */
export function checkSparkAddress(address: string): string | null {
  const lower = address.toLowerCase();
  if (lower !== address && address.toUpperCase() !== address) return 'must not mix upper and lower case';
  const separator = lower.lastIndexOf('1');
  const prefix = lower.slice(0, separator);
  const data = lower.slice(separator + 1);
  if (
    separator < 1 ||
    !SPARK_PREFIXES.includes(prefix) ||
    data.length < 20 ||
    data.length > 300 ||
    !BECH32_CHARSET.test(data)
  ) {
    return `must be a Spark address (${SPARK_PREFIXES.map((p) => `${p}1…`).join(', ')}) in the bech32 alphabet`;
  }
  return null;
}

/** BOLT 11 invoices start with ln + a network prefix (bc, tb, bcrt, tbs). */
export function checkBolt11(invoice: string): string | null {
  return /^ln(bc|tb|bcrt|tbs)[0-9a-z]{20,}$/i.test(invoice)
    ? null
    : 'must be a BOLT 11 invoice (lnbc…, lntb…, lnbcrt…)';
}

export function checkBolt12(offer: string): string | null {
  return /^lno1[0-9a-z]{20,}$/i.test(offer) ? null : 'must be a BOLT 12 offer (lno1…)';
}

export function checkLightningAddress(address: string): string | null {
  return /^[a-z0-9._+-]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(address) ? null : 'must look like user@domain.tld';
}

const BECH32_ALPHABET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function bech32Polymod(values: readonly number[]): number {
  let checksum = 1;
  for (const value of values) {
    const top = checksum >>> 25;
    checksum = ((checksum & 0x1ffffff) << 5) ^ value;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) checksum ^= BECH32_GENERATORS[i]!;
  }
  return checksum;
}

/** Bytes as 5-bit words, the last one padded with zero bits (BIP 173). */
export function toBech32Words(bytes: Uint8Array): number[] {
  const words: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      words.push((buffer >>> bits) & 31);
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) words.push((buffer << (5 - bits)) & 31);
  return words;
}

/** A bech32 string (BIP 173) of a human-readable part and 5-bit words, checksum included. */
export function bech32Encode(hrp: string, words: readonly number[]): string {
  const expanded = [...hrp]
    .map((c) => c.charCodeAt(0) >>> 5)
    .concat(
      [0],
      [...hrp].map((c) => c.charCodeAt(0) & 31),
    );
  const polymod = bech32Polymod([...expanded, ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = [0, 1, 2, 3, 4, 5].map((i) => (polymod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => BECH32_ALPHABET[w]).join('')}`;
}

// The formats the account-type table names, registered for request validation.
defineFormat('iban', checkIban);
defineFormat('aba-routing', checkAbaRouting);
defineFormat('clabe', checkClabe);
defineFormat('evm-address', checkEvmAddress);
defineFormat('solana-address', checkSolanaAddress);
defineFormat('tron-address', checkTronAddress);
defineFormat('spark-address', checkSparkAddress);
defineFormat('bolt11', checkBolt11);
defineFormat('bolt12', checkBolt12);
defineFormat('lightning-address', checkLightningAddress);
