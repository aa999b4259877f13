// RAILYARD_RECORD=<file>: every exchange under the Grid base path is appended to the file
// as one NDJSON line (method, path, status, request and response bodies), the format
// shared/tools/openapi-conformance reads. One write per line keeps concurrent writers
// (test workers, several instances) from interleaving.

import { appendFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { BASE_PATH } from '../config.js';
import { answeredByFault } from './request-marks.js';
import { WRITE_ONLY_FIELDS } from './redaction.js';

function parseMaybeJson(payload: unknown): unknown {
  if (typeof payload !== 'string' || payload === '') return null;
  try {
    return JSON.parse(payload);
  } catch {
    return payload;
  }
}

/**
 * A body that is not JSON (a multipart upload) is not recorded, but its presence is: the
 * conformance tool reads null as "no body", and a short description (never JSON) as a body of
 * the recorded content type, which it does not validate.
 */
function describeOtherBody(headers: Record<string, string | string[] | undefined>): string | null {
  const length = Number(headers['content-length'] ?? 0);
  if (length === 0 && headers['transfer-encoding'] === undefined) return null;
  return `(${String(headers['content-type']).split(';')[0]} body of ${length} bytes, not recorded)`;
}

/**
 * Request fields the reference marks write-only (a provider's client secret, an identity
 * document's number; listed in redaction.ts): the record keeps that they were sent, never what
 * they held. A record may be kept or shared (CI keeps one per run). The other secrets of that
 * list stay, as the record must remain valid by the reference.
 */
const REDACTED = '(write-only, not recorded)';

function redacted(key: string, value: unknown): unknown {
  return WRITE_ONLY_FIELDS.has(key) && typeof value === 'string' ? REDACTED : value;
}

/**
 * Response fields that carry a secret: revealCard's link holds a one-time token after `#`,
 * which opens the card's number. The record keeps the link without it.
 */
function responseBody(payload: unknown): unknown {
  const body = parseMaybeJson(payload);
  if (body === null || typeof body !== 'object' || !('panEmbedUrl' in body)) return body;
  const link = (body as { panEmbedUrl: unknown }).panEmbedUrl;
  if (typeof link !== 'string') return body;
  return { ...body, panEmbedUrl: `${link.split('#')[0]}#not-recorded` };
}

export function attachRecorder(app: FastifyInstance, file: string): void {
  app.addHook('onSend', async (request, reply, payload) => {
    // An answer a fault rule made is not the contract's: the platform asked for it.
    if (!request.url.startsWith(BASE_PATH) || answeredByFault(request)) return payload;
    const requestContentType = request.headers['content-type'];
    const isJsonRequest = requestContentType === undefined || requestContentType.includes('json');
    const line = {
      method: request.method,
      path: request.url,
      status: reply.statusCode,
      requestContentType: requestContentType ?? null,
      requestBody: isJsonRequest
        ? JSON.parse(JSON.stringify(request.body ?? null, redacted))
        : describeOtherBody(request.headers),
      responseContentType: reply.getHeader('content-type') ?? null,
      responseBody: responseBody(payload),
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
    return payload;
  });
}
