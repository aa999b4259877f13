// A journal entry as captured (src/http/journal.ts, CapturedRequest) made into the values of
// its stored row: bodies redacted (src/http/redact-text.js) or noted by their size, the
// request's hash, the error code read from the answer. Plain JavaScript, as the journal's
// thread (journal-worker.js) makes the rows of an embedded store on disk itself, off the
// requests' thread; journal.ts makes them for the other stores, and an amended entry's answer.

import { sha256Hex } from '../../crypto/digest.js';
import { textRedactor } from '../../http/redact-text.js';

/** A JSON string literal: what a body column holds when the body itself is not kept. */
const note = (text) => JSON.stringify(text);

/** A body as text: a string as it is; bytes (a Buffer, or the Uint8Array a thread receives) decoded as UTF-8. */
function payloadText(payload) {
  if (payload === undefined || typeof payload === 'string') return payload;
  return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
}

// An entry as it travels to the journal's thread: its fields as an array, in the order of
// these two functions (cheaper to copy between threads than an object, which carries its
// field names each time). Each is written out field by field: an object literal has one
// shape from the start, where keys set in a loop build it one transition at a time.

/** The entry as an array of its fields. */
export function toWire(e) {
  return [
    e.id,
    e.platformId,
    e.receivedAtMs,
    e.sandboxAt,
    e.method,
    e.url,
    e.operationId,
    e.status,
    e.durationMs,
    e.requestId,
    e.idempotencyKey,
    e.tokenId,
    e.agentId,
    e.bodyText,
    e.requestContentType,
    e.bodyChars,
    e.requestLength,
    e.payload,
    e.responseLength,
    e.responseContentType,
    e.fault,
    e.answered,
  ];
}

/** The entry again from toWire's array. */
export function fromWire(w) {
  return {
    id: w[0],
    platformId: w[1],
    receivedAtMs: w[2],
    sandboxAt: w[3],
    method: w[4],
    url: w[5],
    operationId: w[6],
    status: w[7],
    durationMs: w[8],
    requestId: w[9],
    idempotencyKey: w[10],
    tokenId: w[11],
    agentId: w[12],
    bodyText: w[13],
    requestContentType: w[14],
    bodyChars: w[15],
    requestLength: w[16],
    payload: w[17],
    responseLength: w[18],
    responseContentType: w[19],
    fault: w[20],
    answered: w[21],
  };
}

/**
 * The row maker for one configuration: `secrets` names the fields redacted on each side,
 * `redacted` their replacement, `bodyCharsMax` the longest body kept.
 */
export function journalRows({ secrets, redacted, bodyCharsMax }) {
  const redactRequest = textRedactor(secrets.request, redacted);
  const redactResponse = textRedactor(secrets.response, redacted);
  const longNote = (chars) =>
    note(`(a JSON body of ${chars} characters, longer than the ${bodyCharsMax} the journal keeps)`);
  const capped = (json) => (json.length <= bodyCharsMax ? json : longNote(json.length));

  const requestBodyOf = (entry) => {
    if (entry.bodyText !== undefined) return capped(redactRequest(entry.bodyText));
    if (entry.bodyChars > bodyCharsMax) return longNote(entry.bodyChars);
    if (entry.requestLength > 0 || entry.requestContentType?.includes('multipart/') === true)
      return note(`(a ${entry.requestContentType?.split(';')[0] ?? 'body'} of ${entry.requestLength} bytes, not kept)`);
    return null;
  };

  const responseBodyOf = (entry) => {
    if (entry.responseLength === 0) return null;
    if (entry.responseContentType?.includes('json') !== true)
      return note(
        `(a ${entry.responseContentType?.split(';')[0] ?? 'body'} of ${entry.responseLength} characters, not kept)`,
      );
    const text = payloadText(entry.payload);
    return text === undefined ? longNote(entry.responseLength) : capped(redactResponse(text));
  };

  const errorCodeOf = (entry) => {
    if (entry.status === undefined || entry.status < 400) return null;
    const text = payloadText(entry.payload);
    if (text === undefined) return null;
    try {
      const code = JSON.parse(text).code;
      return typeof code === 'string' ? code : null;
    } catch {
      return null;
    }
  };

  // The request as sent, before redaction: method, path and query, and the body's text as
  // received. Two requests with one hash are the same request (a retry sends the same bytes).
  // note: a body too long to keep counts by its length only.
  const requestHashOf = (entry) => {
    const body = entry.bodyText ?? (entry.bodyChars >= 0 ? `(${entry.bodyChars} characters)` : '');
    return sha256Hex(`${entry.method} ${entry.url}\n${body}`);
  };

  const answerColumns = (entry) => ({
    status: entry.status ?? null,
    error_code: errorCodeOf(entry),
    duration_ms: Math.round(entry.durationMs * 1000) / 1000,
    response_body: responseBodyOf(entry),
    fault: entry.fault === undefined ? null : JSON.stringify(entry.fault),
    answered: entry.answered ? 1 : 0,
  });

  // The row's values in the order of store.JOURNAL_COLUMNS.
  const valuesOf = (entry) => {
    const answer = answerColumns(entry);
    return [
      entry.id,
      entry.platformId,
      new Date(Math.round(entry.receivedAtMs)).toISOString(),
      entry.sandboxAt.toISOString(),
      entry.method,
      entry.url,
      entry.operationId ?? null,
      answer.status,
      answer.error_code,
      answer.duration_ms,
      entry.requestId,
      entry.idempotencyKey ?? null,
      entry.tokenId,
      entry.agentId ?? null,
      requestBodyOf(entry),
      answer.response_body,
      requestHashOf(entry),
      answer.fault,
      answer.answered,
    ];
  };

  return { valuesOf, answerColumns };
}
