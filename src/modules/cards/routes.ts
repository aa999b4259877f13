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
  SandboxCardAuthorizationAdviceRequest,
  SandboxCardAuthorizationRequest,
  type SandboxCardAuthorizationInput,
  SandboxCardBalanceInquiryRequest,
  SandboxCardClearingRequest,
  SandboxCardReturnRequest,
  SandboxCardSimulationResponse,
  SandboxCardTransactionRefRequest,
} from './schemas.js';
import * as service from './service.js';
import { type EventKind, type OpeningKind, simulateEvent, simulateOpening } from './simulations.js';

/** The simulators that open a card transaction: path, operationId, what it simulates. */
const OPENING_SIMULATORS: readonly [string, string, OpeningKind, string][] = [
  ['authorization', 'sandboxSimulateCardAuthorization', 'AUTHORIZATION', 'Simulate a card authorization'],
  [
    'balance_inquiry',
    'sandboxSimulateCardBalanceInquiry',
    'BALANCE_INQUIRY',
    'Simulate a balance inquiry (a zero-amount authorization)',
  ],
  [
    'credit_authorization',
    'sandboxSimulateCardCreditAuthorization',
    'CREDIT_AUTHORIZATION',
    'Simulate a credit authorization to the card',
  ],
  [
    'financial_authorization',
    'sandboxSimulateCardFinancialAuthorization',
    'FINANCIAL_AUTHORIZATION',
    'Simulate a single-message authorization that clears at once',
  ],
  [
    'financial_credit_authorization',
    'sandboxSimulateCardFinancialCreditAuthorization',
    'FINANCIAL_CREDIT_AUTHORIZATION',
    'Simulate a single-message credit that clears at once',
  ],
  [
    'credit_authorization_advice',
    'sandboxSimulateCardCreditAuthorizationAdvice',
    'CREDIT_AUTHORIZATION_ADVICE',
    'Simulate a credit authorization advice from the network',
  ],
];

/** The simulators that change a card transaction. */
const EVENT_SIMULATORS: readonly [string, string, EventKind, string, unknown][] = [
  [
    'clearing',
    'sandboxSimulateCardClearing',
    'CLEARING',
    'Simulate a clearing of a card transaction',
    SandboxCardClearingRequest,
  ],
  [
    'return',
    'sandboxSimulateCardReturn',
    'RETURN',
    'Simulate a merchant return of a settled card transaction',
    SandboxCardReturnRequest,
  ],
  [
    'return_reversal',
    'sandboxSimulateCardReturnReversal',
    'RETURN_REVERSAL',
    'Simulate the reversal of the last return of a refunded card transaction',
    SandboxCardTransactionRefRequest,
  ],
  [
    'authorization_advice',
    'sandboxSimulateCardAuthorizationAdvice',
    'AUTHORIZATION_ADVICE',
    'Simulate an advice that resizes an open authorization',
    SandboxCardAuthorizationAdviceRequest,
  ],
];

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

  for (const [path, operationId, kind, summary] of OPENING_SIMULATORS) {
    const inquiry = kind === 'BALANCE_INQUIRY';
    app.post(
      `/sandbox/cards/:id/simulate/${path}`,
      {
        schema: op({
          operationId,
          tag: 'Sandbox',
          summary,
          permission: 'TRANSACT',
          params: CardIdParams,
          body: Type.Ref(inquiry ? SandboxCardBalanceInquiryRequest : SandboxCardAuthorizationRequest),
          success: { 202: Type.Ref(SandboxCardSimulationResponse) },
          errors: [400, 401, 403, 404, 500],
        }),
      },
      async (request, reply) => {
        const accepted = await simulateOpening(
          request.ctx,
          request.params.id,
          kind,
          request.body as Partial<SandboxCardAuthorizationInput> & Pick<SandboxCardAuthorizationInput, 'merchant'>,
        );
        reply.code(202);
        return accepted;
      },
    );
  }

  for (const [path, operationId, kind, summary, body] of EVENT_SIMULATORS) {
    app.post(
      `/sandbox/cards/:id/simulate/${path}`,
      {
        schema: op({
          operationId,
          tag: 'Sandbox',
          summary,
          permission: 'TRANSACT',
          params: CardIdParams,
          body: Type.Ref(body as typeof SandboxCardTransactionRefRequest),
          success: { 202: Type.Ref(SandboxCardSimulationResponse) },
          errors: [400, 401, 403, 404, 500],
        }),
      },
      async (request, reply) => {
        const accepted = await simulateEvent(
          request.ctx,
          request.params.id,
          kind,
          request.body as { cardTransactionId: string; amount?: number },
        );
        reply.code(202);
        return accepted;
      },
    );
  }
};
