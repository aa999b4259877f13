import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  ExternalAccountLookupParams,
  ReceiverExternalAccountLookupResponse,
  ReceiverUmaLookupResponse,
  SenderQuery,
  UmaLookupParams,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Cross-Currency Transfers';

export const receiverRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/receiver/uma/:receiverUmaAddress',
    {
      schema: op({
        operationId: 'lookupUma',
        tag,
        summary: 'Find out what a UMA address accepts before paying it',
        permission: 'VIEW',
        params: UmaLookupParams,
        querystring: SenderQuery,
        success: { 200: Type.Ref(ReceiverUmaLookupResponse) },
        errors: [400, 401, 404, 412, 424, 500],
      }),
    },
    async (request) => service.lookupUma(request.ctx, request.params.receiverUmaAddress, request.query),
  );

  app.get(
    '/receiver/external-account/:accountId',
    {
      schema: op({
        operationId: 'lookupExternalAccount',
        tag,
        summary: 'Find out what an external account accepts before paying it',
        permission: 'VIEW',
        params: ExternalAccountLookupParams,
        querystring: SenderQuery,
        success: { 200: Type.Ref(ReceiverExternalAccountLookupResponse) },
        errors: [400, 401, 404, 412, 424, 500],
      }),
    },
    async (request) => service.lookupExternalAccount(request.ctx, request.params.accountId, request.query),
  );
};
