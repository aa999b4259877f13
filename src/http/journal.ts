// The request journal's capture: what a platform's app sent under the Grid base path and how
// railyard answered, taken from each request as it is answered, and handed to the journal
// (src/modules/requests/journal.ts), which writes it to the store later, in batches. Nothing
// here touches the store, serializes, parses or copies a body: the request's path keeps
// references to the text it already has, the body as received (kept by the JSON parser through
// keepBodyText) and the answer as sent, and drops a body longer than the journal keeps.
//
// An entry is taken when the answer is about to be sent (onSend), so a client that reads the
// journal right after its answer finds its request there. The connection's close completes it:
// an answer the connection lost (a fault rule dropped it, the client went away) is marked
// unanswered, and a request that ended with no answer at all is taken then.
//
// Requests railyard cannot tie to a platform (refused credentials, unknown paths) are in no
// platform's journal. Requests that carry `X-Railyard-Journal: off` are left out: the
// dashboard and the seed send it, so the journal holds what the app sent.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BASE_PATH } from '../config.js';
import type { Clock } from '../clock.js';
import { type FaultMark, faultMarkOf } from './request-marks.js';
import { isOperationSchema } from './route.js';

/** The header that keeps a request out of the journal, with the value `off`. */
export const JOURNAL_HEADER = 'x-railyard-journal';
/** Longer bodies are kept as a note of their size only (so they are not held either). */
export const BODY_CHARS_MAX = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The journal's record of the request while it runs (null: not journaled). */
    journaled: Tracked | null;
  }
}

/** One request as captured; the journal turns it into a stored row when it writes. */
export interface CapturedRequest {
  /** Set by the journal when it writes the entry. */
  id: string;
  platformId: string;
  /** Arrival, on the server's clock (ms since the epoch). */
  receivedAtMs: number;
  /** Arrival, on the platform's sandbox clock. */
  sandboxAt: Date;
  method: string;
  /** Path and query under the server root, as sent. */
  url: string;
  operationId: string | undefined;
  /** The status railyard answered (or was about to); undefined when it produced no answer. */
  status: number | undefined;
  durationMs: number;
  requestId: string;
  idempotencyKey: string | undefined;
  tokenId: string | null;
  agentId: string | undefined;
  /**
   * The JSON body as received, when it parsed and is at most BODY_CHARS_MAX characters long;
   * undefined otherwise (no body, not JSON, refused unread, or too long).
   */
  bodyText: string | undefined;
  requestContentType: string | undefined;
  /** The length of the JSON text received (-1: none was read as JSON). */
  bodyChars: number;
  /** The body's length in bytes as the request declared it (Content-Length; 0 without one). */
  requestLength: number;
  /**
   * What was sent back: a string or Buffer of at most BODY_CHARS_MAX characters (bytes), or
   * undefined for none, or one longer (then `responseLength` says how long).
   */
  payload: string | Buffer | undefined;
  /** The length of the answer's body when it was a string or Buffer; 0 otherwise. */
  responseLength: number;
  responseContentType: string | undefined;
  fault: FaultMark | undefined;
  /** The whole answer reached the connection. */
  answered: boolean;
}

/** Where captured requests go (the journal of src/modules/requests/). */
export interface RequestJournal {
  /** Each platform's window: how many of its latest requests are kept. */
  readonly size: number;
  /** Takes a new entry (its id is drawn when it is written). */
  record(entry: CapturedRequest): void;
  /** An entry already taken changed (its answer was lost, came late, or a fault mark came after it). */
  amend(entry: CapturedRequest): void;
  /** Writes every entry taken so far; resolves once they are in the store. */
  flush(): Promise<void>;
  /** Writes what is left and takes no more. */
  close(): Promise<void>;
}

/** A request under the Grid base path being followed: since when, its body, and its entry once taken. */
interface Tracked {
  /** Arrival on the server's clock (ms since the epoch): never before an earlier request's. */
  receivedAtMs: number;
  startedAt: number;
  /** The answer reached the connection whole ('finish'). */
  finished: boolean;
  bodyText: string | undefined;
  /** The length of the JSON text received (-1: none read). */
  bodyChars: number;
  entry: CapturedRequest | undefined;
}

/**
 * Keeps the JSON text of a journaled request's body, once it parsed: a reference to the
 * string the parser already holds, or only its length past BODY_CHARS_MAX.
 */
export function keepBodyText(request: FastifyRequest, text: string): void {
  const tracked = request.journaled;
  if (tracked === null) return;
  tracked.bodyChars = text.length;
  tracked.bodyText = text.length <= BODY_CHARS_MAX ? text : undefined;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function capture(request: FastifyRequest, tracked: Tracked): CapturedRequest | undefined {
  // note: `ctx` is set once the credentials are accepted (also when the token then lacks the
  // operation's permission): it names the platform whose journal gets the request.
  const ctx = request.ctx as FastifyRequest['ctx'] | null;
  if (ctx === null || ctx === undefined) return undefined;
  const schema = request.routeOptions.schema;
  const durationMs = performance.now() - tracked.startedAt;
  return {
    id: '',
    platformId: ctx.platformId,
    receivedAtMs: tracked.receivedAtMs,
    sandboxAt: ctx.now,
    method: request.method,
    url: request.url,
    operationId: isOperationSchema(schema) ? schema.operationId : undefined,
    status: undefined,
    durationMs,
    requestId: request.id,
    idempotencyKey: header(request.headers['idempotency-key']),
    tokenId: ctx.tokenId,
    agentId: ctx.agent?.id,
    bodyText: tracked.bodyText,
    requestContentType: header(request.headers['content-type']),
    bodyChars: tracked.bodyChars,
    requestLength: Number(request.headers['content-length'] ?? 0) || 0,
    payload: undefined,
    responseLength: 0,
    responseContentType: undefined,
    fault: faultMarkOf(request),
    answered: false,
  };
}

function answer(entry: CapturedRequest, tracked: Tracked, reply: FastifyReply, payload: unknown): void {
  entry.status = reply.statusCode;
  const body = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : undefined;
  entry.responseLength = body?.length ?? 0;
  entry.payload = body !== undefined && body.length <= BODY_CHARS_MAX ? body : undefined;
  const type = reply.getHeader('content-type');
  entry.responseContentType = typeof type === 'string' ? type : undefined;
  entry.durationMs = performance.now() - tracked.startedAt;
}

export function attachJournal(app: FastifyInstance, journal: RequestJournal, clock: Clock): void {
  // The connection's close completes the entry, however the request ended.
  const closed = (request: FastifyRequest, reply: FastifyReply, tracked: Tracked) => {
    const finished = tracked.finished;
    const entry = tracked.entry;
    const fault = faultMarkOf(request);
    if (entry === undefined) {
      const late = capture(request, tracked);
      if (late === undefined) return;
      // Answered only when the handler wrote to the connection itself (a hijacked reply).
      late.answered = finished;
      if (finished) late.status = reply.raw.statusCode;
      late.fault = fault;
      tracked.entry = late;
      journal.record(late);
      return;
    }
    if (entry.answered === finished && entry.fault === fault) return;
    entry.answered = finished;
    entry.fault = fault;
    journal.amend(entry);
  };

  app.decorateRequest('journaled', null);
  app.addHook('onRequest', (request, reply, done) => {
    if (request.url.startsWith(BASE_PATH) && header(request.headers[JOURNAL_HEADER]) !== 'off') {
      const tracked: Tracked = {
        receivedAtMs: clock.nowMs(),
        startedAt: performance.now(),
        finished: false,
        bodyText: undefined,
        bodyChars: -1,
        entry: undefined,
      };
      request.journaled = tracked;
      reply.raw.once('finish', () => {
        tracked.finished = true;
      });
      reply.raw.once('close', () => closed(request, reply, tracked));
    }
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const tracked = request.journaled;
    if (tracked === null) return done(null, payload);
    if (tracked.entry === undefined) {
      const taken = capture(request, tracked);
      if (taken !== undefined) {
        answer(taken, tracked, reply, payload);
        // Until the connection says otherwise (see closed above).
        taken.answered = true;
        tracked.entry = taken;
        journal.record(taken);
      }
    } else {
      // The connection closed before the answer was ready (the client went away): the answer
      // is kept, and the entry stays unanswered.
      answer(tracked.entry, tracked, reply, payload);
      journal.amend(tracked.entry);
    }
    done(null, payload);
  });
}
