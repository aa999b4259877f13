// Webhook operations: the sandbox's test send, and railyard's delivery log with replay.
// The delivery machinery itself is in src/events/.

import type { PageRequest } from '../../db/pagination.js';
import * as delivery from '../../events/delivery.js';
import type { DeliveryFilters } from '../../events/store.js';
import type { Ctx } from '../../http/context.js';

export function sendTestWebhook(ctx: Ctx) {
  return delivery.sendTestWebhook(ctx);
}

export function listWebhookDeliveries(ctx: Ctx, filters: DeliveryFilters, page: PageRequest) {
  return delivery.listDeliveries(ctx, filters, page);
}

export function getWebhookDelivery(ctx: Ctx, deliveryId: string) {
  return delivery.getDelivery(ctx, deliveryId);
}

export function replayWebhookDelivery(ctx: Ctx, deliveryId: string) {
  return delivery.replayDelivery(ctx, deliveryId);
}
