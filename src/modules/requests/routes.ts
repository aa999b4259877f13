// The request journal and its report, under /_railyard: what the platform's app sent to the
// Grid API and how railyard answered. Any token may read them.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { op } from '../../http/route.js';
import {
  RailyardRequest,
  RailyardRequestList,
  RailyardRequestListQuery,
  RailyardRequestParams,
  RailyardRequestReport,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Railyard';

export const requestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/requests',
    {
      schema: op({
        operationId: 'railyardListRequests',
        tag,
        summary: "List the requests the platform's app made to the Grid API, newest first",
        permission: 'VIEW',
        querystring: RailyardRequestListQuery,
        success: { 200: RailyardRequestList },
        errors: [400, 401, 500],
      }),
    },
    async (request) => {
      const { operationId, status, code, idempotencyKey, since, ...page } = request.query;
      return service.listRequests(request.ctx, { operationId, status, code, idempotencyKey, since }, page);
    },
  );

  app.get(
    '/requests/report',
    {
      schema: op({
        operationId: 'railyardRequestsReport',
        tag,
        summary: "Sum up the journal: answers per operation, and what the app's integration should look at",
        permission: 'VIEW',
        success: { 200: RailyardRequestReport },
        errors: [401, 500],
      }),
    },
    async (request) => service.requestsReport(request.ctx),
  );

  app.get(
    '/requests/:requestId',
    {
      schema: op({
        operationId: 'railyardGetRequest',
        tag,
        summary: 'One request of the journal, with its bodies',
        permission: 'VIEW',
        params: RailyardRequestParams,
        success: { 200: RailyardRequest },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getRequest(request.ctx, request.params.requestId),
  );
};
