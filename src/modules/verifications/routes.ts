import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sendReply } from '../../http/command.js';
import { op } from '../../http/route.js';
import { CustomerIdParams } from '../customers/schemas.js';
import {
  IdempotencyHeaders,
  KycLinkCreateRequest,
  KycLinkResponse,
  Verification,
  VerificationIdParams,
  VerificationList,
  VerificationListQuery,
  VerificationRequest,
} from './schemas.js';
import * as service from './service.js';

const tag = 'KYC/KYB Verifications';

export const verificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/verifications',
    {
      schema: op({
        operationId: 'listVerifications',
        tag,
        summary: 'List verifications',
        permission: 'VIEW',
        querystring: VerificationListQuery,
        success: { 200: Type.Ref(VerificationList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listVerifications(request.ctx, request.query),
  );

  app.post(
    '/verifications',
    {
      schema: op({
        operationId: 'createVerification',
        tag,
        summary: 'Submit a customer for KYC or KYB',
        permission: 'MANAGE',
        body: Type.Ref(VerificationRequest),
        success: { 200: Type.Ref(Verification) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) => service.createVerification(request.ctx, request.body.customerId),
  );

  app.get(
    '/verifications/:verificationId',
    {
      schema: op({
        operationId: 'getVerification',
        tag,
        summary: 'Get a verification',
        permission: 'VIEW',
        params: VerificationIdParams,
        success: { 200: Type.Ref(Verification) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getVerification(request.ctx, request.params.verificationId),
  );

  app.post(
    '/customers/:customerId/kyc-link',
    {
      schema: op({
        operationId: 'createCustomerKycLink',
        tag,
        summary: 'Create a link to the hosted KYC/KYB flow',
        permission: 'MANAGE',
        params: CustomerIdParams,
        headers: IdempotencyHeaders,
        bodyOptional: true,
        body: Type.Ref(KycLinkCreateRequest),
        success: { 201: Type.Ref(KycLinkResponse) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request, reply) =>
      sendReply(
        reply,
        await service.createCustomerKycLink(
          request.ctx,
          request.params.customerId,
          request.body,
          request.headers['idempotency-key'],
          `${request.protocol}://${request.host}`,
        ),
      ),
  );
};
