import { randomBytes } from 'node:crypto';
import { systemClock } from './clock.js';

// Identifiers are `<Type>:<uuid v7>`: time-ordered, so an index on them follows creation order.

let lastMs = 0;
let sequence = 0;

// Random bytes drawn in blocks: one call to the system's generator per 256 ids instead of
// one per id (a busy write path creates several ids per request).
const RANDOM_BLOCK_BYTES = 4096;
let randomBlock = Buffer.alloc(0);
let randomOffset = 0;

function random(count: number): Buffer {
  if (randomOffset + count > randomBlock.length) {
    randomBlock = randomBytes(RANDOM_BLOCK_BYTES);
    randomOffset = 0;
  }
  const out = Buffer.from(randomBlock.subarray(randomOffset, randomOffset + count));
  randomOffset += count;
  return out;
}

/** RFC 9562 UUID version 7; a 12-bit counter keeps ids from one process ordered within a millisecond. */
export function uuidv7(nowMs: number): string {
  if (nowMs <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
    nowMs = lastMs;
  } else {
    lastMs = nowMs;
    sequence = random(2).readUInt16BE(0) & 0x7ff;
  }
  const bytes = random(16);
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
