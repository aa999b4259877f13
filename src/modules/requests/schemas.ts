// Schemas of the request journal and its report, under /_railyard (outside the Grid
// namespace, so not reference components).

import { Type } from '@sinclair/typebox';
import { DateTime, PageQuery, StringEnum } from '../../http/schemas.js';

export const FaultMarkSchema = Type.Object({
  ruleId: Type.String(),
  effect: StringEnum(['status', 'latencyMs', 'reset', 'lostResponse']),
  value: Type.Optional(Type.Number()),
});

/** One request a platform's app made under the Grid base path, as railyard answered it. */
export const RailyardRequest = Type.Object({
  id: Type.String(),
  /** Arrival on the server's clock. */
  receivedAt: DateTime,
  /** Arrival on the platform's sandbox clock. */
  sandboxTime: DateTime,
  method: Type.String(),
  /** Path and query as sent, from the server root. */
  path: Type.String(),
  operationId: Type.Optional(Type.String()),
  /** The status railyard answered; absent when it produced none (the connection closed first). */
  status: Type.Optional(Type.Integer()),
  /** False when the answer did not reach the connection whole (or there was none). */
  answered: Type.Boolean(),
  /** The error envelope's code of a non-2xx answer. */
  errorCode: Type.Optional(Type.String()),
  durationMs: Type.Number({ minimum: 0 }),
  /** The request id railyard logged and answered in X-Request-Id. */
  requestId: Type.String(),
  idempotencyKey: Type.Optional(Type.String()),
  /** The API token that made the request, or the agent. */
  tokenId: Type.Optional(Type.String()),
  agentId: Type.Optional(Type.String()),
  /** The fault rule that fired on the request. */
  fault: Type.Optional(FaultMarkSchema),
  /** The JSON body sent, secrets redacted (or a note of what was sent instead). */
  requestBody: Type.Optional(Type.Unknown()),
  /** The JSON body answered, secrets redacted (or a note of what was answered instead). */
  responseBody: Type.Optional(Type.Unknown()),
});

export const RailyardRequestList = Type.Object({
  data: Type.Array(RailyardRequest),
  hasMore: Type.Boolean(),
  nextCursor: Type.Optional(Type.String()),
  totalCount: Type.Integer({ minimum: 0 }),
});

export const RailyardRequestListQuery = Type.Object({
  ...PageQuery,
  operationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  /** Inclusive, on the server's clock (receivedAt). */
  since: Type.Optional(DateTime),
});

export const RailyardRequestParams = Type.Object({ requestId: Type.String() });

const RetryOutcome = StringEnum(['SAME_KEY', 'NEW_KEY', 'NO_KEY', 'NOT_RETRIED']);

export const RailyardRequestReport = Type.Object({
  /** The journal's window: how many of the latest requests it keeps, and what it holds now. */
  window: Type.Object({
    size: Type.Integer({ minimum: 0 }),
    requests: Type.Integer({ minimum: 0 }),
    firstReceivedAt: Type.Optional(DateTime),
    lastReceivedAt: Type.Optional(DateTime),
  }),
  /** Per operation: how many requests, by status and by error code. */
  operations: Type.Array(
    Type.Object({
      operationId: Type.String(),
      requests: Type.Integer({ minimum: 0 }),
      /** Requests that got no whole answer. */
      unanswered: Type.Integer({ minimum: 0 }),
      byStatus: Type.Record(Type.String(), Type.Integer()),
      byCode: Type.Record(Type.String(), Type.Integer()),
    }),
  ),
  /** Requests that move money sent without an Idempotency-Key, per operation. */
  missingIdempotencyKeys: Type.Array(
    Type.Object({
      operationId: Type.String(),
      requests: Type.Integer({ minimum: 1 }),
      /** The latest of them (journal ids), newest first. */
      requestIds: Type.Array(Type.String()),
    }),
  ),
  /** Idempotency-Keys sent again with another request (path or body) of the same operation. */
  reusedIdempotencyKeys: Type.Array(
    Type.Object({
      operationId: Type.String(),
      idempotencyKey: Type.String(),
      requests: Type.Integer({ minimum: 2 }),
      /** How many different requests carried the key. */
      distinctRequests: Type.Integer({ minimum: 2 }),
      requestIds: Type.Array(Type.String()),
    }),
  ),
  /** Answers of 5xx or 429, and requests left without an answer, with what the client did next. */
  failedAnswers: Type.Array(
    Type.Object({
      requestId: Type.String(),
      receivedAt: DateTime,
      method: Type.String(),
      path: Type.String(),
      operationId: Type.Optional(Type.String()),
      status: Type.Optional(Type.Integer()),
      answered: Type.Boolean(),
      errorCode: Type.Optional(Type.String()),
      idempotencyKey: Type.Optional(Type.String()),
      /**
       * SAME_KEY: a later request of the operation carried the same key; NEW_KEY: the same
       * request came again with another key; NO_KEY: it came again without one; NOT_RETRIED.
       */
      retry: RetryOutcome,
      retryRequestId: Type.Optional(Type.String()),
    }),
  ),
  /** Webhook deliveries whose latest try the platform's endpoint failed, with that try. */
  failedWebhookDeliveries: Type.Array(
    Type.Object({
      deliveryId: Type.String(),
      type: Type.String(),
      resourceId: Type.String(),
      /** PENDING (more tries to come) or FAILED (no more). */
      status: Type.String(),
      attemptCount: Type.Integer(),
      lastAttempt: Type.Object({
        startedAt: DateTime,
        url: Type.Optional(Type.String()),
        responseStatus: Type.Optional(Type.Integer()),
        responseExcerpt: Type.Optional(Type.String()),
        error: Type.Optional(Type.String()),
      }),
    }),
  ),
});
