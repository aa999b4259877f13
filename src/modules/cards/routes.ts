import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  Card,
  CardCreateRequest,
  type CardCreateInput,
  CardIdParams,
  CardListQuery,
  CardListResponse,
  CardRevealResponse,
  CardUpdateRequest,
  type CardUpdateInput,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Cards';

export const cardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/cards',
    {
      schema: op({
        operationId: 'createCard',
        tag,
        summary: 'Issue a card to a customer, funded from its internal accounts',
        permission: 'MANAGE',
        body: Type.Ref(CardCreateRequest),
        success: { 201: Type.Ref(Card) },
        errors: [400, 401, 500, 501],
      }),
    },
    async (request, reply) => {
      const card = await service.createCard(request.ctx, request.body as CardCreateInput);
      reply.code(201);
      return card;
    },
  );

  app.get(
    '/cards',
    {
      schema: op({
        operationId: 'listCards',
        tag,
        summary: 'List cards',
        permission: 'VIEW',
        querystring: CardListQuery,
        success: { 200: Type.Ref(CardListResponse) },
        errors: [400, 401, 500, 501],
      }),
    },
    async (request) => service.listCards(request.ctx, request.query),
  );

  app.get(
    '/cards/:id',
    {
      schema: op({
        operationId: 'getCardById',
        tag,
        summary: 'Get a card',
        permission: 'VIEW',
        params: CardIdParams,
        success: { 200: Type.Ref(Card) },
        errors: [401, 404, 500, 501],
      }),
    },
    async (request) => service.getCard(request.ctx, request.params.id),
  );

  app.patch(
    '/cards/:id',
    {
      schema: op({
        operationId: 'updateCardById',
        tag,
        summary: 'Freeze, unfreeze or close a card, or change its funding sources or limit',
        permission: 'MANAGE',
        params: CardIdParams,
        body: Type.Ref(CardUpdateRequest),
        success: { 200: Type.Ref(Card) },
        errors: [400, 401, 404, 409, 500, 501],
      }),
    },
    async (request) => service.updateCard(request.ctx, request.params.id, request.body as CardUpdateInput),
  );

  app.post(
    '/cards/:id/reveal',
    {
      schema: op({
        operationId: 'revealCard',
        tag,
        summary: "A short-lived link that shows the card's number, CVC and expiry",
        permission: 'MANAGE',
        params: CardIdParams,
        success: { 200: Type.Ref(CardRevealResponse) },
        errors: [401, 403, 404, 500, 501],
      }),
    },
    async (request) => service.revealCard(request.ctx, request.params.id, `${request.protocol}://${request.host}`),
  );
};
