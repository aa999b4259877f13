// Railyard's inspection endpoints under /_railyard: read-only views the dashboard needs and the
// Grid API lacks. Any token may read them.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EventWaitRoom } from '../../events/waiters.js';
import { op } from '../../http/route.js';
import {
  AccountEntries,
  AccountEntriesParams,
  AccountEntriesQuery,
  DeliveryRequest,
  DeliveryRequestParams,
  RailyardEventList,
  RailyardEventListQuery,
  TransactionTimeline,
  TransactionTimelineParams,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Railyard';

export const inspectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Requests that wait for events; a closing server answers them at once (see events/waiters.ts).
  const waitRoom = new EventWaitRoom(app.deps.db.k);
  app.addHook('preClose', async () => waitRoom.close());

  app.get(
    '/events',
    {
      schema: op({
        operationId: 'railyardListEvents',
        tag,
        summary:
          "List the platform's recorded events, newest first; with after, those recorded after an event, oldest first; with wait, hold the request until one matches",
        permission: 'VIEW',
        querystring: RailyardEventListQuery,
        success: { 200: RailyardEventList },
        errors: [400, 401, 429, 500],
      }),
    },
    async (request, reply) => {
      // A client that leaves before the answer ends its wait.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const page = await service.listEvents(request.ctx, waitRoom, request.query, gone.signal);
      // Answered because the server closes: the connection goes with the answer, or a client
      // that keeps it open would hold the server's close until it lets go.
      if (waitRoom.closing) reply.header('connection', 'close');
      return page;
    },
  );

  app.get(
    '/transactions/:transactionId/timeline',
    {
      schema: op({
        operationId: 'railyardGetTransactionTimeline',
        tag,
        summary: "A transaction's events and money movements, oldest first",
        permission: 'VIEW',
        params: TransactionTimelineParams,
        success: { 200: TransactionTimeline },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getTransactionTimeline(request.ctx, request.params.transactionId),
  );

  app.get(
    '/internal-accounts/:accountId/entries',
    {
      schema: op({
        operationId: 'railyardListInternalAccountEntries',
        tag,
        summary: "The ledger postings behind an internal account's balances, newest first",
        permission: 'VIEW',
        params: AccountEntriesParams,
        querystring: AccountEntriesQuery,
        success: { 200: AccountEntries },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) => service.getAccountEntries(request.ctx, request.params.accountId, request.query),
  );

  app.get(
    '/webhooks/deliveries/:deliveryId/request',
    {
      schema: op({
        operationId: 'railyardGetWebhookDeliveryRequest',
        tag,
        summary: 'The request a try of a webhook delivery sends: headers (signature included) and exact body',
        permission: 'VIEW',
        params: DeliveryRequestParams,
        success: { 200: DeliveryRequest },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getDeliveryRequest(request.ctx, request.params.deliveryId),
  );
};
