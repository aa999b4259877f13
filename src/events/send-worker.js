// The webhook sender's thread (started by sender.ts). It makes the HTTP POSTs to receivers,
// on keep-alive connections (undici's client), so that a send and the one after it do not
// wait for the main thread, which is busy with requests and the store: under load a turn of
// its event loop takes milliseconds, and the tries of one resource, which go one after
// another, would each wait for one. Tries that share an order key go out one after another,
// in the order they arrived, each once the one before has its whole answer; the others go
// side by side.
//
// It signs the bodies too (signing is a good part of a send's cost on the main thread).
//
// Plain JavaScript, loaded by path both from src/ (tests) and from dist/ (the build bundles
// it there), so it carries no TypeScript. Messages in: arrays of { id, url, body, headers,
// timeoutMs, orderKey?, signature? }, where `signature` names the header to carry the body's
// signature and the key to make it with, or 'compact'; out: arrays of { id, status?, body?,
// error?, latencyMs }, or { compacted: { before, after } }. Both sides batch what one turn of
// their loop made.

import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { Agent } from 'undici';
import { fullCollection } from '../full-collection.js';
import { signatureHeaderValue } from './signing.js';

/** How much of an answer is read and kept; the rest is read and dropped. */
const RESPONSE_BYTES_MAX = 64 * 1024;

// undici's client rather than node:http's: under a saturating load this thread makes thousands
// of POSTs a second, and undici's costs about a third of node:http's CPU per POST on
// keep-alive connections (measured on the 2-core VM: 25 against 69 µs with eight sends side
// by side, 77 against 117 µs one after another). One deadline covers the whole exchange
// (below), so undici's own timeouts, which would each cut it short, are off.
const dispatcher = new Agent({
  connections: 64,
  headersTimeout: 0,
  bodyTimeout: 0,
  connect: { timeout: 0 },
});

class TimeoutError extends Error {}

function describe(err, timeoutMs) {
  if (err instanceof TimeoutError) return `no complete answer within ${timeoutMs} ms`;
  return err?.code ? `${err.code}: ${err.message}` : err?.message || String(err);
}

/** Credentials written in the endpoint's URL go out as Basic authorization, as a browser would. */
function withCredentials(url, headers) {
  if (url.username === '' && url.password === '') return headers;
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { ...headers, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

async function once(url, body, headers, deadlineMs) {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new TimeoutError()), Math.max(deadlineMs - performance.now(), 0));
  try {
    const response = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers,
      body,
      signal: deadline.signal,
    });
    const chunks = [];
    let kept = 0;
    for await (const chunk of response.body) {
      if (kept >= RESPONSE_BYTES_MAX) continue;
      const part = chunk.subarray(0, RESPONSE_BYTES_MAX - kept);
      chunks.push(part);
      kept += part.length;
    }
    return { status: response.statusCode, body: Buffer.concat(chunks).toString('utf8') };
  } catch (err) {
    // Whichever error surfaces first (the request's or the answer's), a timeout is a timeout.
    throw deadline.signal.aborted ? new TimeoutError() : err;
  } finally {
    clearTimeout(timer);
  }
}

/** A connection the receiver closed before any answer came (say, a keep-alive one as it was reused). */
const CLOSED_BEFORE_ANSWER = new Set(['UND_ERR_SOCKET', 'ECONNRESET']);

/**
 * One POST. A connection closed before any answer came (most often a keep-alive one the
 * receiver closed just as it was reused) gets one more try at once. If the body did arrive
 * the first time, the receiver sees the same envelope twice, which it deduplicates on `id`
 * as it would a retry.
 */
async function post(message, body, headers) {
  const started = performance.now();
  const deadlineMs = started + message.timeoutMs;
  let url;
  try {
    url = new URL(message.url);
  } catch (err) {
    return { error: describe(err, message.timeoutMs), latencyMs: 0 };
  }
  const sent = withCredentials(url, headers);
  for (let round = 0; ; round++) {
    try {
      const answer = await once(url, body, sent, deadlineMs);
      return { ...answer, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      if (round === 0 && CLOSED_BEFORE_ANSWER.has(err?.code)) continue;
      return { error: describe(err, message.timeoutMs), latencyMs: Math.round(performance.now() - started) };
    }
  }
}

/** The last send of each order key, while one is under way. */
const chains = new Map();

function ordered(key, fn) {
  const before = chains.get(key);
  const mine = before === undefined ? fn() : before.then(fn);
  chains.set(key, mine);
  void mine.then(() => {
    if (chains.get(key) === mine) chains.delete(key);
  });
  return mine;
}

/** Answers not yet posted back: they go together, once this turn's work is done. */
let answers = [];

function answer(message) {
  if (answers.push(message) === 1)
    setImmediate(() => {
      const batch = answers;
      answers = [];
      parentPort.postMessage(batch);
    });
}

function accept(message) {
  // Signed as it arrives, so a try that waits for the one before it in its order has its
  // signature ready: only the POST itself is left between two tries of one resource.
  const body = Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength);
  const headers = { ...message.headers };
  if (message.signature !== undefined) {
    try {
      headers[message.signature.header] = signatureHeaderValue(message.signature.privateKeyPem, body);
    } catch (err) {
      answer({ id: message.id, error: `cannot sign: ${describe(err)}`, latencyMs: 0 });
      return;
    }
  }
  const send = () => post(message, body, headers);
  const result = message.orderKey === undefined ? send() : ordered(message.orderKey, send);
  void result.then((outcome) => answer({ id: message.id, ...outcome }));
}

// Sends come in batches (sender.ts posts one message per turn of the main thread's loop).
// 'compact' asks for a compacting collection of this thread's heap (compactSenderHeap).
parentPort.on('message', (messages) => {
  if (messages === 'compact') {
    const before = getHeapStatistics().total_heap_size;
    fullCollection();
    parentPort.postMessage({ compacted: { before, after: getHeapStatistics().total_heap_size } });
    return;
  }
  for (const message of messages) accept(message);
});
