import { randomFillSync, randomInt } from 'node:crypto';
import { systemClock } from './clock.js';

// Identifiers are `<Type>:<uuid v7>`: time-ordered, so an index on them follows creation order.

let lastMs = 0;
let sequence = 0;

// Random bytes drawn in bulk: one call to the system's generator per 256 ids.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** The offset of `length` fresh random bytes in the pool (refilled when they run out). */
function randomAt(length: number): number {
  if (poolOffset + length > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += length;
  return at;
}

// An id's 16 bytes are put together here, then turned into text: no buffer per id.
const idBytes = Buffer.alloc(16);

/** RFC 9562 UUID version 7; a 12-bit counter keeps ids from one process ordered within a millisecond. */
export function uuidv7(nowMs: number): string {
  if (nowMs <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
    nowMs = lastMs;
  } else {
    lastMs = nowMs;
    sequence = pool.readUInt16BE(randomAt(2)) & 0x7ff;
  }
  const bytes = idBytes;
  const at = randomAt(16);
  pool.copy(bytes, 0, at, at + 16);
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function newId(type: string): string {
  return `${type}:${uuidv7(systemClock.nowMs())}`;
}

/**
 * A new id of `type` that `acceptable` allows: for ids a sandbox suffix rule reads, so that a
 * random ending never picks a scenario the caller did not ask for.
 */
export function newIdWhere(type: string, acceptable: (id: string) => boolean): string {
  let id = newId(type);
  while (!acceptable(id)) id = newId(type);
  return id;
}

/** Letters and digits a person reads back without confusing them (no 0/O, 1/I/L). */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** A random code of `length` characters from CODE_ALPHABET, for codes people type or read out. */
export function randomCode(length: number): string {
  let code = '';
  for (let i = 0; i < length; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}
