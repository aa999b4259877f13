import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import { ApprovePaymentRequest, IncomingTransaction, RejectPaymentRequest, TransactionIdParams } from './schemas.js';
import * as service from './service.js';

const tag = 'Transactions';

export const paymentApprovalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/transactions/:transactionId/approve',
    {
      schema: op({
        operationId: 'approvePendingPayment',
        tag,
        summary: 'Approve an incoming payment that awaits the platform',
        permission: 'TRANSACT',
        params: TransactionIdParams,
        bodyOptional: true,
        body: Type.Ref(ApprovePaymentRequest),
        success: { 200: Type.Ref(IncomingTransaction) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => service.approvePendingPayment(request.ctx, request.params.transactionId, request.body),
  );

  app.post(
    '/transactions/:transactionId/reject',
    {
      schema: op({
        operationId: 'rejectPendingPayment',
        tag,
        summary: 'Reject an incoming payment that awaits the platform',
        permission: 'TRANSACT',
        params: TransactionIdParams,
        bodyOptional: true,
        body: Type.Ref(RejectPaymentRequest),
        success: { 200: Type.Ref(IncomingTransaction) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => service.rejectPendingPayment(request.ctx, request.params.transactionId, request.body),
  );
};
