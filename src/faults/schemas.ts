// The fault rules a platform sets under /_railyard: on its Grid API requests (/faults) and on
// its webhook deliveries (/webhook-faults). Railyard's own shapes, not reference components.

import { Type } from '@sinclair/typebox';
import { WEBHOOK_TYPES } from '../events/outbox.js';
import { DateTime, StringEnum } from '../http/schemas.js';
import {
  DELAY_SECONDS_MAX,
  FAULT_STATUSES,
  HEADER_NAME_CHARS_MAX,
  HEADER_VALUE_CHARS_MAX,
  HTTP_METHODS,
  LATENCY_MS_MAX,
  LOST_RESPONSE_STATUSES,
  PATH_CHARS_MAX,
  RETRY_AFTER_SECONDS_MAX,
  SEED_MAX,
  TIMES_MAX,
  WEBHOOK_FAULT_EFFECTS,
} from './rules.js';

function IntegerEnum(values: readonly number[]) {
  return Type.Unsafe<number>({ type: 'integer', enum: [...values] });
}

/** An HTTP header name (RFC 9110 token characters). */
const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

const Times = Type.Integer({ minimum: 1, maximum: TIMES_MAX });

/** What a request rule matches and how often it fires. */
const RequestMatch = {
  operationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  method: Type.Optional(StringEnum(HTTP_METHODS)),
  path: Type.Optional(Type.String({ minLength: 1, maxLength: PATH_CHARS_MAX })),
  header: Type.Optional(
    Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: HEADER_NAME_CHARS_MAX, pattern: HEADER_NAME_PATTERN }),
        value: Type.String({ maxLength: HEADER_VALUE_CHARS_MAX }),
      },
      { additionalProperties: false },
    ),
  ),
  times: Type.Optional(Times),
  probability: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: SEED_MAX })),
};

/** The effect: exactly one of status, latencyMs, reset, lostResponse (the service checks that). */
const RequestEffect = {
  status: Type.Optional(IntegerEnum(FAULT_STATUSES)),
  retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: RETRY_AFTER_SECONDS_MAX })),
  latencyMs: Type.Optional(Type.Integer({ minimum: 1, maximum: LATENCY_MS_MAX })),
  reset: Type.Optional(Type.Literal(true)),
  lostResponse: Type.Optional(Type.Literal(true)),
  lostResponseStatus: Type.Optional(IntegerEnum(LOST_RESPONSE_STATUSES)),
};

export const FaultRuleInput = Type.Object({ ...RequestMatch, ...RequestEffect }, { additionalProperties: false });

export const FaultRule = Type.Object({
  /** `FaultRule:<uuid>`. */
  id: Type.String(),
  ...RequestMatch,
  ...RequestEffect,
  /** Requests that matched the rule (with a probability: the draws made). */
  matchedCount: Type.Integer({ minimum: 0 }),
  /** Requests the rule fired on. */
  firedCount: Type.Integer({ minimum: 0 }),
  /** False once the rule fired `times` times. */
  active: Type.Boolean(),
  createdAt: DateTime,
});

export const FaultRuleList = Type.Object({ data: Type.Array(FaultRule) });

export const FaultRuleParams = Type.Object({ ruleId: Type.String() });

const WebhookMatch = {
  eventType: Type.Optional(StringEnum(WEBHOOK_TYPES)),
  effect: StringEnum(WEBHOOK_FAULT_EFFECTS),
  times: Type.Optional(Times),
  delaySeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: DELAY_SECONDS_MAX })),
};

export const WebhookFaultRuleInput = Type.Object(WebhookMatch, { additionalProperties: false });

export const WebhookFaultRule = Type.Object({
  /** `WebhookFaultRule:<uuid>`. */
  id: Type.String(),
  ...WebhookMatch,
  /** Deliveries the rule fired on. */
  firedCount: Type.Integer({ minimum: 0 }),
  active: Type.Boolean(),
  createdAt: DateTime,
});

export const WebhookFaultRuleList = Type.Object({ data: Type.Array(WebhookFaultRule) });
