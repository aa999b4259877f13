import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sendReply } from '../../http/command.js';
import { op } from '../../http/route.js';
import { IdempotencyHeaders } from '../../http/schemas.js';
import { TransactionOneOf } from '../transactions/schemas.js';
import { TransferInRequest, TransferOutRequest } from './schemas.js';
import * as service from './service.js';

const tag = 'Same-Currency Transfers';

export const transferRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/transfer-in',
    {
      schema: op({
        operationId: 'createTransferIn',
        tag,
        summary: 'Pull funds from an external account into an internal account',
        permission: 'TRANSACT',
        headers: IdempotencyHeaders,
        body: Type.Ref(TransferInRequest),
        success: { 201: Type.Ref(TransactionOneOf) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) =>
      sendReply(reply, await service.createTransferIn(request.ctx, request.body, request.headers['idempotency-key'])),
  );

  app.post(
    '/transfer-out',
    {
      schema: op({
        operationId: 'createTransferOut',
        tag,
        summary: 'Send funds from an internal account to an external account',
        permission: 'TRANSACT',
        headers: IdempotencyHeaders,
        body: Type.Ref(TransferOutRequest),
        success: { 201: Type.Ref(TransactionOneOf) },
        errors: [400, 401, 404, 429, 500],
      }),
    },
    async (request, reply) =>
      sendReply(reply, await service.createTransferOut(request.ctx, request.body, request.headers['idempotency-key'])),
  );
};
