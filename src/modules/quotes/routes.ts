import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sendReply } from '../../http/command.js';
import { op } from '../../http/route.js';
import { IdempotencyHeaders } from '../../http/schemas.js';
import { attachedFieldErrors } from '../../http/validation.js';
import { TransactionOneOf } from '../transactions/schemas.js';
import {
  ExchangeRateListResponse,
  ExchangeRatesQuery,
  ExecuteQuoteRequest,
  Quote,
  QuoteIdParams,
  QuoteRequest,
  SandboxSendRequest,
  ScaAuthorization,
} from './schemas.js';
import * as service from './service.js';
import { signedHeaders } from '../wallet-auth/signing.js';

const tag = 'Cross-Currency Transfers';

export const quoteRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/quotes',
    {
      schema: op({
        operationId: 'createQuote',
        tag,
        summary: 'Quote a cross-currency payment and lock its rate',
        permission: 'TRANSACT',
        headers: IdempotencyHeaders,
        body: Type.Ref(QuoteRequest),
        success: { 201: Type.Ref(Quote), 202: Type.Ref(Quote) },
        errors: [400, 401, 403, 412, 424, 429, 500, 501],
      }),
      // The schema's findings join the service's own checks, so one 400 names every field.
      attachValidation: true,
    },
    async (request, reply) =>
      sendReply(
        reply,
        await service.createQuote(
          request.ctx,
          request.body as service.QuoteInput,
          request.headers['idempotency-key'],
          attachedFieldErrors(request.validationError, { schema: IdempotencyHeaders, value: request.headers }),
        ),
      ),
  );

  app.get(
    '/quotes/:quoteId',
    {
      schema: op({
        operationId: 'getQuoteById',
        tag,
        summary: 'Read a quote and where its payment stands',
        permission: 'VIEW',
        params: QuoteIdParams,
        success: { 200: Type.Ref(Quote) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getQuoteById(request.ctx, request.params.quoteId),
  );

  app.post(
    '/quotes/:quoteId/execute',
    {
      schema: op({
        operationId: 'executeQuote',
        tag,
        summary: 'Execute a quote funded from an account',
        permission: 'TRANSACT',
        params: QuoteIdParams,
        headers: Type.Composite([
          IdempotencyHeaders,
          Type.Object({
            'grid-wallet-signature': Type.Optional(Type.String()),
            'service-wallet-signature': Type.Optional(Type.String()),
          }),
        ]),
        bodyOptional: true,
        body: Type.Ref(ExecuteQuoteRequest),
        success: { 200: Type.Ref(Quote) },
        errors: [400, 401, 403, 404, 409, 429, 500],
      }),
    },
    async (request, reply) =>
      sendReply(
        reply,
        await service.executeQuote(
          request.ctx,
          request.params.quoteId,
          request.body,
          request.headers['idempotency-key'],
          signedHeaders(request.headers).signature,
        ),
      ),
  );

  app.post(
    '/quotes/:quoteId/authorize',
    {
      schema: op({
        operationId: 'authorizeQuote',
        tag: 'Strong Customer Authentication',
        summary: "Answer a quote's SCA challenge",
        permission: 'TRANSACT',
        params: QuoteIdParams,
        body: Type.Ref(ScaAuthorization),
        success: { 200: Type.Ref(Quote) },
        errors: [400, 401, 404, 409, 423, 429, 500],
      }),
    },
    async (request) => service.authorizeQuote(request.ctx, request.params.quoteId, request.body),
  );

  app.post(
    '/quotes/:quoteId/authorize/resend',
    {
      schema: op({
        operationId: 'resendQuoteScaCode',
        tag: 'Strong Customer Authentication',
        summary: "Send a quote's SCA code again",
        permission: 'TRANSACT',
        params: QuoteIdParams,
        success: { 204: null },
        errors: [401, 404, 409, 429, 500],
      }),
    },
    async (request, reply) => {
      await service.resendQuoteScaCode(request.ctx, request.params.quoteId);
      reply.code(204);
    },
  );

  app.post(
    '/sandbox/send',
    {
      schema: op({
        operationId: 'sandboxSend',
        tag: 'Sandbox',
        summary: "Pay a quote's instructions (real-time funding, or a push from an external bank account)",
        permission: 'TRANSACT',
        body: Type.Ref(SandboxSendRequest),
        success: { 200: Type.Ref(TransactionOneOf) },
        errors: [400, 401, 403, 404, 500],
      }),
    },
    async (request) => service.sandboxSend(request.ctx, request.body),
  );

  app.get(
    '/exchange-rates',
    {
      schema: op({
        operationId: 'getExchangeRates',
        tag: 'Exchange Rates',
        summary: 'Current sandbox rates and fees per corridor',
        permission: 'VIEW',
        querystring: ExchangeRatesQuery,
        success: { 200: Type.Ref(ExchangeRateListResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.getExchangeRates(request.ctx, request.query),
  );
};
