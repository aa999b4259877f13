import { Type } from '@sinclair/typebox';
import { WEBHOOK_TYPES } from '../../events/outbox.js';
import { WEBHOOK_FAULT_EFFECTS } from '../../faults/rules.js';
import { component, DateTime, PageQuery, StringEnum } from '../../http/schemas.js';

export const TestWebhookResponse = component(
  'TestWebhookResponse',
  Type.Object({
    url: Type.Optional(Type.String({ format: 'uri' })),
    response_status: Type.Integer(),
    response_body: Type.Optional(Type.String()),
  }),
);

// Railyard's delivery log (outside the Grid namespace, so not reference components).

export const DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;

export const WebhookDelivery = Type.Object({
  /** The envelope id, which is the event's id. */
  id: Type.String(),
  type: StringEnum(WEBHOOK_TYPES),
  resourceId: Type.String(),
  status: StringEnum(DELIVERY_STATUSES),
  attemptCount: Type.Integer({ minimum: 0 }),
  createdAt: DateTime,
  lastAttemptAt: Type.Optional(DateTime),
  nextAttemptAt: Type.Optional(DateTime),
  deliveredAt: Type.Optional(DateTime),
  /** What a webhook fault rule (POST /_railyard/webhook-faults) did to this delivery. */
  fault: Type.Optional(
    Type.Object({
      ruleId: Type.String(),
      effect: StringEnum(WEBHOOK_FAULT_EFFECTS),
      delaySeconds: Type.Optional(Type.Number()),
      /** outOfOrder: the delivery of the object's next event, sent before this one. */
      heldBehind: Type.Optional(Type.String()),
    }),
  ),
});

export const WebhookAttempt = Type.Object({
  number: Type.Integer({ minimum: 1 }),
  trigger: StringEnum(['EVENT', 'REPLAY', 'SEND_TEST']),
  startedAt: DateTime,
  url: Type.Optional(Type.String()),
  outcome: StringEnum(['SUCCEEDED', 'DUPLICATE', 'FAILED']),
  responseStatus: Type.Optional(Type.Integer()),
  responseExcerpt: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  latencyMs: Type.Integer({ minimum: 0 }),
  /** `drop`: a fault rule kept this try from being sent; `duplicate`: the second copy a rule sent. */
  fault: Type.Optional(StringEnum(['drop', 'duplicate'])),
});

export const WebhookDeliveryDetail = Type.Composite([
  WebhookDelivery,
  Type.Object({
    envelope: Type.Object({ id: Type.String(), type: Type.String(), timestamp: DateTime, data: Type.Unknown() }),
    attempts: Type.Array(WebhookAttempt),
  }),
]);

export const WebhookDeliveryList = Type.Object({
  data: Type.Array(WebhookDelivery),
  hasMore: Type.Boolean(),
  nextCursor: Type.Optional(Type.String()),
  totalCount: Type.Integer({ minimum: 0 }),
});

export const WebhookDeliveryListQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(StringEnum(WEBHOOK_TYPES)),
  status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
  /** The id of the object the events are about (the envelope's data.id). */
  resourceId: Type.Optional(Type.String({ minLength: 1 })),
});

export const WebhookDeliveryParams = Type.Object({ deliveryId: Type.String() });
