// SHA-256 of a text as hex, on the request path (idempotency fingerprints, the journal's
// request hashes, stored secrets). Node's one-shot `crypto.hash` (20.12 and later) makes no
// Hash object and is about twice as fast on short texts; earlier versions take the stream.
// Plain JavaScript: the request journal's thread (journal-worker.js) loads it by path too.

import * as crypto from 'node:crypto';

const oneShot = crypto.hash;

/** @type {(text: string) => string} */
export const sha256Hex =
  typeof oneShot === 'function'
    ? (text) => oneShot('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
