import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { sendReply } from '../../http/command.js';
import { type FieldError, invalidInput } from '../../http/errors.js';
import { op } from '../../http/route.js';
import { attachedFieldErrors } from '../../http/validation.js';
import {
  type BurnInput,
  type LinkInput,
  type MintInput,
  OperationIdParams,
  OperationListQuery,
  ProviderAccountIdParams,
  ProviderAccountListQuery,
  type RegisterInput,
  RequiredIdempotencyHeaders,
  Stablecoin,
  StablecoinBurnRequest,
  StablecoinIdParams,
  StablecoinListQuery,
  StablecoinListResponse,
  StablecoinMintRequest,
  StablecoinOperation,
  StablecoinOperationListResponse,
  StablecoinProviderAccount,
  StablecoinProviderAccountLinkRequest,
  StablecoinProviderAccountListResponse,
  StablecoinRegisterRequest,
} from './schemas.js';
import * as operations from './operations.js';
import * as service from './service.js';

const tag = 'Stablecoins';

/**
 * The four writes validate with `attachValidation`: Fastify stops at the first part that
 * fails (the body before the headers), so the body's and the Idempotency-Key's problems are
 * gathered here. A registration, mint or burn hands them to its service, which adds its own
 * checks to the one 400; a link has no checks of its own and is refused here.
 */
function schemaErrors(request: FastifyRequest): FieldError[] {
  return attachedFieldErrors(request.validationError as never, {
    schema: RequiredIdempotencyHeaders,
    value: request.headers,
  });
}

function refuseInvalid(request: FastifyRequest): void {
  const errors = schemaErrors(request);
  if (errors.length > 0) throw invalidInput(errors);
}

const key = (request: FastifyRequest) => request.headers['idempotency-key'] as string;

export const stablecoinRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/stablecoin-provider-accounts',
    {
      schema: op({
        operationId: 'linkStablecoinProviderAccount',
        tag,
        summary: "Link the platform's account at a stablecoin provider with its API credentials",
        permission: 'MANAGE',
        headers: RequiredIdempotencyHeaders,
        body: Type.Ref(StablecoinProviderAccountLinkRequest),
        success: { 201: Type.Ref(StablecoinProviderAccount) },
        errors: [400, 401, 409, 500],
      }),
      attachValidation: true,
    },
    async (request, reply) => {
      refuseInvalid(request);
      return sendReply(
        reply,
        await service.linkStablecoinProviderAccount(request.ctx, request.body as LinkInput, key(request)),
      );
    },
  );

  app.get(
    '/stablecoin-provider-accounts',
    {
      schema: op({
        operationId: 'listStablecoinProviderAccounts',
        tag,
        summary: 'List stablecoin provider account links',
        permission: 'VIEW',
        querystring: ProviderAccountListQuery,
        success: { 200: Type.Ref(StablecoinProviderAccountListResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listStablecoinProviderAccounts(request.ctx, request.query),
  );

  app.get(
    '/stablecoin-provider-accounts/:stablecoinProviderAccountId',
    {
      schema: op({
        operationId: 'getStablecoinProviderAccount',
        tag,
        summary: 'Get a stablecoin provider account link',
        permission: 'VIEW',
        params: ProviderAccountIdParams,
        success: { 200: Type.Ref(StablecoinProviderAccount) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getStablecoinProviderAccount(request.ctx, request.params.stablecoinProviderAccountId),
  );

  app.post(
    '/stablecoins',
    {
      schema: op({
        operationId: 'registerStablecoin',
        tag,
        summary: 'Register a stablecoin the platform issued at its provider',
        permission: 'MANAGE',
        headers: RequiredIdempotencyHeaders,
        body: Type.Ref(StablecoinRegisterRequest),
        success: { 201: Type.Ref(Stablecoin) },
        errors: [400, 401, 404, 409, 500],
      }),
      attachValidation: true,
    },
    async (request, reply) => {
      return sendReply(
        reply,
        await service.registerStablecoin(
          request.ctx,
          request.body as RegisterInput,
          key(request),
          schemaErrors(request),
        ),
      );
    },
  );

  app.get(
    '/stablecoins',
    {
      schema: op({
        operationId: 'listStablecoins',
        tag,
        summary: 'List registered stablecoins',
        permission: 'VIEW',
        querystring: StablecoinListQuery,
        success: { 200: Type.Ref(StablecoinListResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listStablecoins(request.ctx, request.query),
  );

  app.get(
    '/stablecoins/:stablecoinId',
    {
      schema: op({
        operationId: 'getStablecoin',
        tag,
        summary: 'Get a registered stablecoin',
        permission: 'VIEW',
        params: StablecoinIdParams,
        success: { 200: Type.Ref(Stablecoin) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getStablecoin(request.ctx, request.params.stablecoinId),
  );

  app.post(
    '/stablecoins/:stablecoinId/mints',
    {
      schema: op({
        operationId: 'createStablecoinMint',
        tag,
        summary: 'Mint tokens of a stablecoin against fiat',
        permission: 'TRANSACT',
        params: StablecoinIdParams,
        headers: RequiredIdempotencyHeaders,
        body: Type.Ref(StablecoinMintRequest),
        success: { 201: Type.Ref(StablecoinOperation) },
        errors: [400, 401, 404, 409, 500, 503],
      }),
      attachValidation: true,
    },
    async (request, reply) => {
      return sendReply(
        reply,
        await operations.createStablecoinMint(
          request.ctx,
          request.params.stablecoinId,
          request.body as MintInput,
          key(request),
          schemaErrors(request),
        ),
      );
    },
  );

  app.post(
    '/stablecoins/:stablecoinId/burns',
    {
      schema: op({
        operationId: 'createStablecoinBurn',
        tag,
        summary: 'Burn tokens of a stablecoin and pay out their fiat',
        permission: 'TRANSACT',
        params: StablecoinIdParams,
        headers: RequiredIdempotencyHeaders,
        body: Type.Ref(StablecoinBurnRequest),
        success: { 201: Type.Ref(StablecoinOperation) },
        errors: [400, 401, 404, 409, 500, 503],
      }),
      attachValidation: true,
    },
    async (request, reply) => {
      return sendReply(
        reply,
        await operations.createStablecoinBurn(
          request.ctx,
          request.params.stablecoinId,
          request.body as BurnInput,
          key(request),
          schemaErrors(request),
        ),
      );
    },
  );

  app.get(
    '/stablecoins/:stablecoinId/operations',
    {
      schema: op({
        operationId: 'listStablecoinOperations',
        tag,
        summary: "List a stablecoin's mints and burns, newest first",
        permission: 'VIEW',
        params: StablecoinIdParams,
        querystring: OperationListQuery,
        success: { 200: Type.Ref(StablecoinOperationListResponse) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => operations.listStablecoinOperations(request.ctx, request.params.stablecoinId, request.query),
  );

  app.get(
    '/stablecoin-operations/:stablecoinOperationId',
    {
      schema: op({
        operationId: 'getStablecoinOperation',
        tag,
        summary: 'Get a stablecoin mint or burn',
        permission: 'VIEW',
        params: OperationIdParams,
        success: { 200: Type.Ref(StablecoinOperation) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => operations.getStablecoinOperation(request.ctx, request.params.stablecoinOperationId),
  );
};

/** Railyard's own endpoint (under /_railyard): the sandbox payment a waiting operation needs. */
export const stablecoinSandboxRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/stablecoin-operations/:stablecoinOperationId/fund',
    {
      schema: op({
        operationId: 'railyardFundStablecoinOperation',
        tag: 'Railyard',
        summary: 'Deliver the funds a PENDING_FUNDING stablecoin mint or burn waits for',
        permission: 'TRANSACT',
        params: OperationIdParams,
        success: { 200: Type.Ref(StablecoinOperation) },
        errors: [401, 404, 409, 500],
      }),
    },
    async (request) => operations.fundStablecoinOperation(request.ctx, request.params.stablecoinOperationId),
  );
};
