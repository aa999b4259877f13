import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import { ApiToken, ApiTokenCreateRequest, TokenIdParams, TokenList, TokenListQuery } from './schemas.js';
import * as service from './service.js';

const tag = 'API Tokens';

export const tokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/tokens',
    {
      schema: op({
        operationId: 'listTokens',
        tag,
        summary: 'List API tokens',
        permission: 'VIEW',
        querystring: TokenListQuery,
        success: { 200: Type.Ref(TokenList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listTokens(request.ctx, request.query),
  );

  app.post(
    '/tokens',
    {
      schema: op({
        operationId: 'createToken',
        tag,
        summary: 'Create an API token',
        permission: 'MANAGE',
        body: Type.Ref(ApiTokenCreateRequest),
        success: { 201: Type.Ref(ApiToken) },
        errors: [400, 401, 500],
      }),
    },
    async (request, reply) => {
      reply.code(201);
      return service.createToken(request.ctx, request.body);
    },
  );

  app.get(
    '/tokens/:tokenId',
    {
      schema: op({
        operationId: 'getTokenById',
        tag,
        summary: 'Get an API token',
        permission: 'VIEW',
        params: TokenIdParams,
        success: { 200: Type.Ref(ApiToken) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getTokenById(request.ctx, request.params.tokenId),
  );

  app.delete(
    '/tokens/:tokenId',
    {
      schema: op({
        operationId: 'deleteTokenById',
        tag,
        summary: 'Delete an API token',
        permission: 'MANAGE',
        params: TokenIdParams,
        success: { 204: null },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteTokenById(request.ctx, request.params.tokenId);
      reply.code(204);
    },
  );
};
