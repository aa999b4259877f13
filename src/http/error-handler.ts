// Every failure leaves as the reference's error envelope {status, code, message, details?}.

import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, invalidInput, type ErrorBody } from './errors.js';
import { answeredByFault } from './request-marks.js';
import { isOperationSchema } from './route.js';
import { toFieldErrors, type Validators } from './validation.js';

function send(reply: FastifyReply, body: ErrorBody) {
  return reply.code(body.status).type('application/json; charset=utf-8').send(body);
}

/**
 * How much of a refused body is read and thrown away before the answer. A client that is
 * still sending when the server closes the connection gets a reset (EPIPE or ECONNRESET)
 * instead of the 400, so the rest of the body is read first; past this bound the answer is
 * sent and the connection closed all the same.
 */
export const DISCARDED_BODY_BYTES_MAX = 64 * 1024 * 1024;

/**
 * Calls `answer` once the rest of a refused, unread body (one over the size limit) has been
 * read and thrown away, or once DISCARDED_BODY_BYTES_MAX more bytes have come, whichever is
 * first. The connection stays open for the client's next request when the whole body came.
 */
function afterRestOfBody(request: FastifyRequest, reply: FastifyReply, answer: () => void): void {
  // Fastify asks for the connection to be closed after such an answer, which would close it
  // with the rest of the body unread.
  reply.removeHeader('connection');
  const raw = request.raw;
  if (raw.complete || raw.destroyed) {
    answer();
    return;
  }
  let discarded = 0;
  let answered = false;
  const once = () => {
    if (answered) return;
    answered = true;
    raw.removeListener('data', onData);
    answer();
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded <= DISCARDED_BODY_BYTES_MAX) return;
    reply.header('connection', 'close');
    once();
  };
  raw.on('data', onData);
  raw.once('end', once);
  raw.once('close', once);
  raw.resume();
}

/**
 * Fastify's frameworkErrors option: what the router refuses before a route is known (a path
 * it cannot decode, a parameter longer than it matches; see src/http/url.ts, which makes both
 * rare). Neither can name a resource, so both are a 404 in the envelope.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  request.log.debug({ code: error.code }, 'request refused by the router');
  send(reply, { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'No such resource' });
}

/**
 * Fastify's clientErrorHandler: a request Node's HTTP parser refuses (a malformed request
 * line or header, headers over the size limit, a request that took too long to arrive). No
 * operation is known yet; the answer is a 400 in the envelope, and the connection closes.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const field = error.code === 'HPE_HEADER_OVERFLOW' ? 'headers' : 'request';
  const message =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'are larger than the server accepts'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'did not arrive in time'
        : 'is not a well-formed HTTP request';
  const body = JSON.stringify(invalidInput([{ field, message }]).toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Fastify's own request errors (content type, body size, JSON syntax) as 400 INVALID_INPUT. */
function requestProblem(error: FastifyError): ApiError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalidInput(
        [{ field: 'Content-Type', message: 'must be application/json' }],
        'Unsupported Content-Type; send application/json',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return invalidInput([{ field: 'body', message: 'is larger than the server accepts' }], 'Request body too large');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalidInput([{ field: 'Content-Length', message: 'does not match the body' }]);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidInput([{ field: 'body', message: 'is not valid JSON' }], 'Malformed JSON body');
    default:
      break;
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return invalidInput([{ field: 'body', message: 'is not valid JSON' }], 'Malformed JSON body');
  }
  return null;
}

export function installErrorHandling(app: FastifyInstance, validators: Validators): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) {
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      return send(reply, error.toBody());
    }
    if (error.validation) {
      const root = error.validationContext === 'body' ? validators.body : validators.text;
      const errors = toFieldErrors(error.validation as never, root);
      if (error.validationContext === 'params') {
        // Path parameters only fail when an id has an impossible shape: it names nothing.
        return send(reply, { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'No such resource' });
      }
      return send(reply, invalidInput(errors).toBody());
    }
    const problem = requestProblem(error);
    if (problem !== null) {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return void afterRestOfBody(request, reply, () => send(reply, problem.toBody()));
      return send(reply, problem.toBody());
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, {
      status: 500,
      code: 'INTERNAL_ERROR',
      message: `An unexpected error occurred (request ${request.id}); the server log has the details`,
    });
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, {
      status: 404,
      code: 'REFERENCE_NOT_FOUND',
      message: `No operation at ${request.method} ${request.originalUrl.split('?')[0]}`,
    }),
  );
}

/**
 * With response checking on (tests), a status the operation does not declare is a bug of
 * railyard, and so is a body sent as prepared bytes (idempotent replies) that does not
 * match the schema of its status: either is logged and turned into a 500 so the test that
 * caused it fails. (Object bodies are checked by the serializer.)
 */
export function installStatusCheck(app: FastifyInstance, validators: Validators): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const schema = request.routeOptions.schema;
    // A fault rule's answer is outside the contract because the platform asked for it.
    if (!isOperationSchema(schema) || answeredByFault(request)) return payload;
    const responseSchema = schema.response[reply.statusCode];
    let problem: string | undefined;
    if (responseSchema === undefined) {
      problem = `railyard answered ${reply.statusCode}, which ${schema.operationId} does not declare`;
    } else if (
      typeof payload === 'string' &&
      reply.statusCode < 300 &&
      !schema['x-no-body-statuses'].includes(reply.statusCode) &&
      // Only JSON bodies are checked (the webhook public key, say, is PEM text).
      String(reply.getHeader('content-type') ?? 'application/json').includes('json')
    ) {
      const validate = validators.compile(responseSchema as never, 'body');
      if (!validate(JSON.parse(payload)))
        problem = `response does not match its own schema: ${JSON.stringify(validate.errors?.slice(0, 5))}`;
    }
    if (problem === undefined) return payload;
    request.log.error({ status: reply.statusCode, operationId: schema.operationId, payload }, problem);
    reply.code(500);
    return JSON.stringify({
      status: 500,
      code: 'INTERNAL_ERROR',
      message: `${problem}: ${String(payload).slice(0, 300)}`,
    });
  });
}
