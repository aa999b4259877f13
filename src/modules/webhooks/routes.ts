import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  TestWebhookResponse,
  WebhookDeliveryDetail,
  WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookDeliveryParams,
} from './schemas.js';
import * as service from './service.js';

/** Under the Grid base path. */
export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/sandbox/webhooks/test',
    {
      schema: op({
        operationId: 'sendTestWebhook',
        tag: 'Sandbox',
        summary: 'Send a TEST webhook to the endpoint now',
        permission: 'MANAGE',
        success: { 200: Type.Ref(TestWebhookResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.sendTestWebhook(request.ctx),
  );
};

/** Railyard's delivery log, under /_railyard. */
export const webhookDeliveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tag = 'Railyard';

  app.get(
    '/webhooks/deliveries',
    {
      schema: op({
        operationId: 'railyardListWebhookDeliveries',
        tag,
        summary: 'List webhook deliveries, newest first',
        permission: 'VIEW',
        querystring: WebhookDeliveryListQuery,
        success: { 200: WebhookDeliveryList },
        errors: [400, 401, 500],
      }),
    },
    async (request) => {
      const { type, status, resourceId, ...page } = request.query;
      return service.listWebhookDeliveries(request.ctx, { type, status, resourceId }, page);
    },
  );

  app.get(
    '/webhooks/deliveries/:deliveryId',
    {
      schema: op({
        operationId: 'railyardGetWebhookDelivery',
        tag,
        summary: 'One webhook delivery with its envelope and every try',
        permission: 'VIEW',
        params: WebhookDeliveryParams,
        success: { 200: WebhookDeliveryDetail },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getWebhookDelivery(request.ctx, request.params.deliveryId),
  );

  app.post(
    '/webhooks/deliveries/:deliveryId/replay',
    {
      schema: op({
        operationId: 'railyardReplayWebhookDelivery',
        tag,
        summary: 'Send a delivery again, as a new round of tries',
        permission: 'MANAGE',
        params: WebhookDeliveryParams,
        success: { 202: WebhookDeliveryDetail },
        errors: [401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      const replayed = await service.replayWebhookDelivery(request.ctx, request.params.deliveryId);
      reply.code(202);
      return replayed;
    },
  );
};
