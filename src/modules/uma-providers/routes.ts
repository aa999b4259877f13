import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import { UmaProviderListQuery, UmaProviderListResponse } from './schemas.js';
import * as service from './service.js';

export const umaProviderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/uma-providers',
    {
      schema: op({
        operationId: 'getAvailableUmaProviders',
        tag: 'Available UMA Providers',
        summary: 'List the UMA providers a payment can reach',
        permission: 'VIEW',
        querystring: UmaProviderListQuery,
        success: { 200: Type.Ref(UmaProviderListResponse) },
        errors: [401, 500],
      }),
    },
    async (request) => service.getAvailableUmaProviders(request.query),
  );
};
