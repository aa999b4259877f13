import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import { PlatformConfig, PlatformConfigUpdateRequest } from './schemas.js';
import * as service from './service.js';

const tag = 'Platform Configuration';

export const platformConfigRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/config',
    {
      schema: op({
        operationId: 'getPlatformConfig',
        tag,
        summary: 'Get the platform configuration',
        permission: 'VIEW',
        success: { 200: Type.Ref(PlatformConfig) },
        errors: [401, 500],
      }),
    },
    async (request) => service.getPlatformConfig(request.ctx),
  );

  app.patch(
    '/config',
    {
      schema: op({
        operationId: 'updatePlatformConfig',
        tag,
        summary: 'Update the platform configuration',
        permission: 'MANAGE',
        body: Type.Ref(PlatformConfigUpdateRequest),
        success: { 200: Type.Ref(PlatformConfig) },
        errors: [400, 401, 500, 501],
      }),
    },
    async (request) => service.updatePlatformConfig(request.ctx, request.body),
  );
};
