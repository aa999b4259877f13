import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import { attachedFieldErrors } from '../../http/validation.js';
import { IncomingTransaction } from '../transactions/schemas.js';
import { SandboxUmaReceiveRequest } from './schemas.js';
import * as service from './service.js';

export const incomingPaymentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Body problems are collected, not thrown, so the service adds its own rules and answers
  // every invalid field in one 400.
  app.post(
    '/sandbox/uma/receive',
    {
      attachValidation: true,
      schema: op({
        operationId: 'sandboxReceive',
        tag: 'Sandbox',
        summary: 'Send a customer a UMA payment from a sandbox sender',
        permission: 'TRANSACT',
        body: Type.Ref(SandboxUmaReceiveRequest),
        success: { 200: Type.Ref(IncomingTransaction) },
        errors: [400, 401, 403, 404, 500],
      }),
    },
    async (request) => service.sandboxReceive(request.ctx, request.body, attachedFieldErrors(request.validationError)),
  );
};
