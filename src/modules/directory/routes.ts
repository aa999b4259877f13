import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import { DiscoveryList, DiscoveryQuery, VaspList, VaspQuery } from './schemas.js';
import * as service from './service.js';

export const directoryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/discoveries',
    {
      schema: op({
        operationId: 'getDiscoveries',
        tag: 'Discoveries',
        summary: 'Banks and payment providers by country and currency',
        permission: 'VIEW',
        querystring: DiscoveryQuery,
        success: { 200: Type.Ref(DiscoveryList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.getDiscoveries(request.query),
  );

  app.get(
    '/vasps',
    {
      schema: op({
        operationId: 'listVasps',
        tag: 'VASPs',
        summary: 'Virtual asset service providers',
        permission: 'VIEW',
        querystring: VaspQuery,
        success: { 200: Type.Ref(VaspList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listVasps(request.query),
  );
};
