import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  BeneficialOwner,
  BeneficialOwnerCreateRequest,
  BeneficialOwnerIdParams,
  BeneficialOwnerList,
  BeneficialOwnerListQuery,
  BeneficialOwnerUpdateRequest,
} from './schemas.js';
import * as service from './service.js';

const tag = 'KYC/KYB Verifications';

export const beneficialOwnerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/beneficial-owners',
    {
      schema: op({
        operationId: 'listBeneficialOwners',
        tag,
        summary: "List a business customer's beneficial owners",
        permission: 'VIEW',
        querystring: BeneficialOwnerListQuery,
        success: { 200: Type.Ref(BeneficialOwnerList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listBeneficialOwners(request.ctx, request.query),
  );

  app.post(
    '/beneficial-owners',
    {
      schema: op({
        operationId: 'createBeneficialOwner',
        tag,
        summary: 'Add a beneficial owner to a business customer',
        permission: 'MANAGE',
        body: Type.Ref(BeneficialOwnerCreateRequest),
        success: { 201: Type.Ref(BeneficialOwner) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) => {
      const owner = await service.createBeneficialOwner(request.ctx, request.body as service.OwnerCreateInput);
      reply.code(201);
      return owner;
    },
  );

  app.get(
    '/beneficial-owners/:beneficialOwnerId',
    {
      schema: op({
        operationId: 'getBeneficialOwner',
        tag,
        summary: 'Get a beneficial owner',
        permission: 'VIEW',
        params: BeneficialOwnerIdParams,
        success: { 200: Type.Ref(BeneficialOwner) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getBeneficialOwner(request.ctx, request.params.beneficialOwnerId),
  );

  app.patch(
    '/beneficial-owners/:beneficialOwnerId',
    {
      schema: op({
        operationId: 'updateBeneficialOwner',
        tag,
        summary: 'Update a beneficial owner',
        permission: 'MANAGE',
        params: BeneficialOwnerIdParams,
        body: Type.Ref(BeneficialOwnerUpdateRequest),
        success: { 200: Type.Ref(BeneficialOwner) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) =>
      service.updateBeneficialOwner(
        request.ctx,
        request.params.beneficialOwnerId,
        request.body as service.OwnerUpdateInput,
      ),
  );
};
