import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  CustomerExternalAccountListQuery,
  ExternalAccount,
  ExternalAccountCreateRequest,
  ExternalAccountIdParams,
  ExternalAccountList,
  OwnershipChallenge,
  OwnershipChallengeRequest,
  OwnershipVerifyRequest,
  PlatformExternalAccountCreateRequest,
  PlatformExternalAccountListQuery,
} from './schemas.js';
import * as service from './service.js';

const tag = 'External Accounts';
const platformScope = { customerId: null };

export const platformExternalAccountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/platform/external-accounts',
    {
      schema: op({
        operationId: 'listPlatformExternalAccounts',
        tag,
        summary: "List the platform's external accounts",
        permission: 'VIEW',
        querystring: PlatformExternalAccountListQuery,
        success: { 200: Type.Ref(ExternalAccountList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) =>
      service.listExternalAccounts(request.ctx, { customerId: null, currency: request.query.currency }, request.query),
  );

  app.post(
    '/platform/external-accounts',
    {
      schema: op({
        operationId: 'createPlatformExternalAccount',
        tag,
        summary: 'Register an external account of the platform',
        permission: 'MANAGE',
        body: Type.Ref(PlatformExternalAccountCreateRequest),
        success: { 201: Type.Ref(ExternalAccount) },
        errors: [400, 401, 409, 500],
      }),
    },
    async (request, reply) => {
      reply.code(201);
      return service.createExternalAccount(
        request.ctx,
        { platformId: request.ctx.platformId, customerId: null },
        request.body,
      );
    },
  );

  app.get(
    '/platform/external-accounts/:externalAccountId',
    {
      schema: op({
        operationId: 'getPlatformExternalAccountById',
        tag,
        summary: "Get one of the platform's external accounts",
        permission: 'VIEW',
        params: ExternalAccountIdParams,
        success: { 200: Type.Ref(ExternalAccount) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getExternalAccount(request.ctx, request.params.externalAccountId, platformScope),
  );

  app.delete(
    '/platform/external-accounts/:externalAccountId',
    {
      schema: op({
        operationId: 'deletePlatformExternalAccountById',
        tag,
        summary: "Delete one of the platform's external accounts",
        permission: 'MANAGE',
        params: ExternalAccountIdParams,
        success: { 204: null },
        errors: [401, 404, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteExternalAccount(request.ctx, request.params.externalAccountId, platformScope);
      reply.code(204);
    },
  );

  app.post(
    '/platform/external-accounts/:externalAccountId/challenge',
    {
      schema: op({
        operationId: 'createPlatformExternalAccountOwnershipChallenge',
        tag,
        summary: 'Start an ownership challenge',
        permission: 'MANAGE',
        params: ExternalAccountIdParams,
        body: Type.Ref(OwnershipChallengeRequest),
        success: { 201: Type.Ref(OwnershipChallenge) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      const baseUrl = `${request.protocol}://${request.host}`;
      const challenge = await service.createOwnershipChallenge(
        request.ctx,
        request.params.externalAccountId,
        platformScope,
        request.body.method,
        baseUrl,
      );
      reply.code(201);
      return challenge;
    },
  );

  app.post(
    '/platform/external-accounts/:externalAccountId/verify',
    {
      schema: op({
        operationId: 'verifyPlatformExternalAccountOwnership',
        tag,
        summary: 'Verify ownership with a wallet signature',
        permission: 'MANAGE',
        params: ExternalAccountIdParams,
        body: Type.Ref(OwnershipVerifyRequest),
        success: { 200: Type.Ref(ExternalAccount) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) =>
      service.verifyOwnership(request.ctx, request.params.externalAccountId, platformScope, request.body.signature),
  );
};

/**
 * The customer side. An account created here without `customerId` belongs to the platform,
 * so these routes see every external account of the platform; `customerId` narrows the list.
 */
export const customerExternalAccountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/customers/external-accounts',
    {
      schema: op({
        operationId: 'listCustomerExternalAccounts',
        tag,
        summary: 'List external accounts',
        permission: 'VIEW',
        querystring: CustomerExternalAccountListQuery,
        success: { 200: Type.Ref(ExternalAccountList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) =>
      service.listExternalAccounts(
        request.ctx,
        { customerId: request.query.customerId ?? 'any', currency: request.query.currency },
        request.query,
      ),
  );

  app.post(
    '/customers/external-accounts',
    {
      schema: op({
        operationId: 'createCustomerExternalAccount',
        tag,
        summary: 'Register an external account of a customer',
        permission: 'MANAGE',
        body: Type.Ref(ExternalAccountCreateRequest),
        success: { 201: Type.Ref(ExternalAccount) },
        errors: [400, 401, 409, 500],
      }),
    },
    async (request, reply) => {
      const account = await service.createCustomerExternalAccount(request.ctx, request.body);
      reply.code(201);
      return account;
    },
  );

  app.get(
    '/customers/external-accounts/:externalAccountId',
    {
      schema: op({
        operationId: 'getCustomerExternalAccountById',
        tag,
        summary: 'Get an external account',
        permission: 'VIEW',
        params: ExternalAccountIdParams,
        success: { 200: Type.Ref(ExternalAccount) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getExternalAccount(request.ctx, request.params.externalAccountId, 'any'),
  );

  app.delete(
    '/customers/external-accounts/:externalAccountId',
    {
      schema: op({
        operationId: 'deleteCustomerExternalAccountById',
        tag,
        summary: 'Delete an external account',
        permission: 'MANAGE',
        params: ExternalAccountIdParams,
        success: { 204: null },
        errors: [401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteExternalAccount(request.ctx, request.params.externalAccountId, 'any');
      reply.code(204);
    },
  );

  app.post(
    '/customers/external-accounts/:externalAccountId/challenge',
    {
      schema: op({
        operationId: 'createExternalAccountOwnershipChallenge',
        tag,
        summary: 'Start an ownership challenge',
        permission: 'MANAGE',
        params: ExternalAccountIdParams,
        body: Type.Ref(OwnershipChallengeRequest),
        success: { 201: Type.Ref(OwnershipChallenge) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      const baseUrl = `${request.protocol}://${request.host}`;
      const challenge = await service.createOwnershipChallenge(
        request.ctx,
        request.params.externalAccountId,
        'any',
        request.body.method,
        baseUrl,
      );
      reply.code(201);
      return challenge;
    },
  );

  app.post(
    '/customers/external-accounts/:externalAccountId/verify',
    {
      schema: op({
        operationId: 'verifyExternalAccountOwnership',
        tag,
        summary: 'Verify ownership with a wallet signature',
        permission: 'MANAGE',
        params: ExternalAccountIdParams,
        body: Type.Ref(OwnershipVerifyRequest),
        success: { 200: Type.Ref(ExternalAccount) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) =>
      service.verifyOwnership(request.ctx, request.params.externalAccountId, 'any', request.body.signature),
  );
};
