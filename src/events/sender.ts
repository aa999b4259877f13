// One HTTP POST to a webhook receiver, outside any transaction. Connections are kept alive
// between deliveries; the whole exchange (connect, send, full answer) has one deadline.

import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';

/** How much of an answer is read and kept; the rest is read and dropped. */
export const RESPONSE_BYTES_MAX = 64 * 1024;

const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

export interface HttpAnswer {
  status: number;
  /** The answer's body as text (at most RESPONSE_BYTES_MAX bytes of it). */
  body: string;
}

export interface PostResult {
  answer?: HttpAnswer;
  /** Why no answer came: timeout or connection error. */
  error?: string;
  latencyMs: number;
}

class TimeoutError extends Error {}

function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof TimeoutError) return `no complete answer within ${timeoutMs} ms`;
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code}: ${e.message}` : e.message || String(err);
}

function once(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  deadlineMs: number,
): Promise<HttpAnswer & { reusedSocket: boolean }> {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(url, {
      method: 'POST',
      agent: AGENTS[url.protocol as 'http:' | 'https:'],
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
    const fail = (err: unknown) => {
      clearTimeout(timer);
      // Whichever error surfaces first (the request's or the answer's), a timeout is a timeout.
      reject(Object.assign(timedOut ? new TimeoutError() : (err as object), { reusedSocket: request.reusedSocket }));
    };
    request.on('error', fail);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept >= RESPONSE_BYTES_MAX) return;
        const part = chunk.subarray(0, RESPONSE_BYTES_MAX - kept);
        chunks.push(part);
        kept += part.length;
      });
      response.on('error', fail);
      response.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          reusedSocket: request.reusedSocket,
        });
      });
    });
    request.end(body);
  });
}

/**
 * POSTs `body` to `url`. A keep-alive connection the receiver closed just as it was reused
 * fails before anything was sent; that one case is tried again on a fresh connection.
 */
export async function post(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<PostResult> {
  const started = performance.now();
  const deadlineMs = started + timeoutMs;
  const target = new URL(url);
  for (let round = 0; ; round++) {
    try {
      const { status, body: text } = await once(target, body, headers, deadlineMs);
      return { answer: { status, body: text }, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { reusedSocket?: boolean };
      if (round === 0 && e.reusedSocket && e.code === 'ECONNRESET') continue;
      return { error: describe(err, timeoutMs), latencyMs: Math.round(performance.now() - started) };
    }
  }
}
