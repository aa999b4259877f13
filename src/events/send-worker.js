// The webhook sender's thread (started by sender.ts). It makes the HTTP POSTs to receivers,
// on keep-alive connections, so that a send and the one after it do not wait for the main
// thread, which is busy with requests and the store: under load a turn of its event loop takes
// milliseconds, and the tries of one resource, which go one after another, would each wait
// for one. Tries that share an order key go out one after another, in the order they arrived,
// each once the one before has its whole answer; the others go side by side.
//
// It signs the bodies too (signing is a good part of a send's cost on the main thread).
//
// Plain JavaScript, loaded by path both from src/ (tests) and from dist/ (the build bundles
// it there), so it carries no TypeScript. Messages in: arrays of { id, url, body, headers,
// timeoutMs, orderKey?, signature? }, where `signature` names the header to carry the body's
// signature and the key to make it with; out: arrays of { id, status?, body?, error?,
// latencyMs }. Both sides batch what one turn of their loop made.

import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import { signatureHeaderValue } from './signing.js';

/** How much of an answer is read and kept; the rest is read and dropped. */
const RESPONSE_BYTES_MAX = 64 * 1024;

const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

class TimeoutError extends Error {}

function describe(err, timeoutMs) {
  if (err instanceof TimeoutError) return `no complete answer within ${timeoutMs} ms`;
  return err?.code ? `${err.code}: ${err.message}` : err?.message || String(err);
}

function once(url, body, headers, deadlineMs) {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(url, {
      method: 'POST',
      agent: AGENTS[url.protocol],
      headers: { ...headers, 'content-length': String(body.length) },
    });
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        request.destroy(new TimeoutError());
      },
      Math.max(deadlineMs - performance.now(), 0),
    );
    const fail = (err) => {
      clearTimeout(timer);
      // Whichever error surfaces first (the request's or the answer's), a timeout is a timeout.
      reject(Object.assign(timedOut ? new TimeoutError() : err, { reusedSocket: request.reusedSocket }));
    };
    request.on('error', fail);
    request.on('response', (response) => {
      const chunks = [];
      let kept = 0;
      response.on('data', (chunk) => {
        if (kept >= RESPONSE_BYTES_MAX) return;
        const part = chunk.subarray(0, RESPONSE_BYTES_MAX - kept);
        chunks.push(part);
        kept += part.length;
      });
      response.on('error', fail);
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.end(body);
  });
}

/**
 * One POST. A keep-alive connection the receiver closed just as it was reused fails before
 * anything was sent; that one case is tried again on a fresh connection.
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
  for (let round = 0; ; round++) {
    try {
      const answer = await once(url, body, headers, deadlineMs);
      return { ...answer, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      if (round === 0 && err?.reusedSocket && err.code === 'ECONNRESET') continue;
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
parentPort.on('message', (messages) => {
  for (const message of messages) accept(message);
});
