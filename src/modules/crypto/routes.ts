import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import { EstimateCryptoWithdrawalFeeRequest, EstimateCryptoWithdrawalFeeResponse } from './schemas.js';
import * as service from './service.js';

export const cryptoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/crypto/estimate-withdrawal-fee',
    {
      schema: op({
        operationId: 'estimateCryptoWithdrawalFee',
        tag: 'Cross-Currency Transfers',
        summary: 'Estimate the fees of a crypto withdrawal',
        permission: 'VIEW',
        body: Type.Ref(EstimateCryptoWithdrawalFeeRequest),
        success: { 200: Type.Ref(EstimateCryptoWithdrawalFeeResponse) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) => service.estimateCryptoWithdrawalFee(request.ctx, request.body),
  );
};
