// POST /_railyard/reset: a platform wipes its own data (see reset.ts), with its own
// credentials and MANAGE. The CLI resets any platform through the server-admin routes
// (server-admin.ts) instead.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../http/route.js';
import { resetPlatform } from './reset.js';

export const ResetResultSchema = Type.Object({
  platformId: Type.String(),
  removed: Type.Record(Type.String(), Type.Integer(), {
    description: 'Rows deleted, by table; tables that held none are left out',
  }),
  internalAccountIds: Type.Array(Type.String(), {
    description: "The platform's internal accounts, opened anew with zero balances",
  }),
});

export const resetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/reset',
    {
      schema: op({
        operationId: 'railyardResetPlatform',
        tag: 'Railyard',
        summary:
          "Delete all of this platform's data (customers, accounts, money, transactions, events, deliveries, jobs), keeping its credentials and configuration",
        permission: 'MANAGE',
        success: { 200: ResetResultSchema },
        errors: [401, 409, 500],
      }),
    },
    async (request) => {
      const result = await resetPlatform(request.ctx.deps, request.ctx.platformId, { request, log: request.log });
      request.log.info({ platformId: result.platformId, removed: result.removed }, 'platform reset');
      return result;
    },
  );
};
