import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  CancelTransactionRequest,
  ConfirmReceiptDeliveryRequest,
  TransactionIdParams,
  TransactionList,
  TransactionListQuery,
  TransactionOneOf,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Transactions';

export const transactionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/transactions',
    {
      schema: op({
        operationId: 'listTransactions',
        tag,
        summary: 'List transactions',
        permission: 'VIEW',
        querystring: TransactionListQuery,
        success: { 200: Type.Ref(TransactionList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listTransactions(request.ctx, request.query),
  );

  app.get(
    '/transactions/:transactionId',
    {
      schema: op({
        operationId: 'getTransactionById',
        tag,
        summary: 'Get a transaction',
        permission: 'VIEW',
        params: TransactionIdParams,
        success: { 200: Type.Ref(TransactionOneOf) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getTransactionById(request.ctx, request.params.transactionId),
  );

  app.post(
    '/transactions/:transactionId/confirm',
    {
      schema: op({
        operationId: 'confirmReceiptDelivery',
        tag,
        summary: 'Confirm that the receipt reached the customer',
        permission: 'TRANSACT',
        params: TransactionIdParams,
        bodyOptional: true,
        body: Type.Ref(ConfirmReceiptDeliveryRequest),
        success: { 200: Type.Ref(TransactionOneOf) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) =>
      service.confirmReceiptDelivery(
        request.ctx,
        request.params.transactionId,
        request.body?.receiptDeliveryConfirmedAt,
      ),
  );

  app.post(
    '/transactions/:transactionId/cancel',
    {
      schema: op({
        operationId: 'cancelTransaction',
        tag,
        summary: 'Cancel a pending bank transfer',
        permission: 'TRANSACT',
        params: TransactionIdParams,
        bodyOptional: true,
        body: Type.Ref(CancelTransactionRequest),
        success: { 200: Type.Ref(TransactionOneOf) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => service.cancelTransaction(request.ctx, request.params.transactionId, request.body?.reason),
  );
};
