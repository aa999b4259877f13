import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { op } from '../../http/route.js';
import { InternalAccount } from '../internal-accounts/schemas.js';
import * as actions from './actions.js';
import {
  AccountIdQuery,
  AuthCredentialChallengeRequest,
  AuthCredentialCreateRequestOneOf,
  AuthCredentialListResponse,
  AuthCredentialResponseOneOf,
  AuthCredentialVerifyRequestOneOf,
  AuthMethodResponse,
  AuthSession,
  AuthSessionRefreshRequest,
  AuthSignedRequestChallenge,
  type CredentialCreateInput,
  type CredentialVerifyInput,
  DelegatedKey,
  DelegatedKeyCreateRequest,
  DelegatedKeyListQuery,
  DelegatedKeyListResponse,
  DelegatedKeySignedRequestChallenge,
  IdParams,
  InternalAccountExportRequest,
  InternalAccountExportResponse,
  InternalAccountUpdateRequest,
  SessionListResponse,
  SignedRequestChallenge,
  SignedRetryHeaders,
} from './schemas.js';
import * as logins from './logins.js';
import * as service from './service.js';
import { signedHeaders } from './signing.js';

const tag = 'Embedded Wallet Auth';

function answer(reply: FastifyReply, result: { status: number; body: unknown }) {
  reply.code(result.status);
  return result.body;
}

export const walletAuthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/auth/credentials',
    {
      schema: op({
        operationId: 'listAuthCredentials',
        tag,
        summary: "List a wallet's authentication credentials",
        permission: 'VIEW',
        querystring: AccountIdQuery,
        success: { 200: Type.Ref(AuthCredentialListResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listCredentials(request.ctx, request.query.accountId),
  );

  app.post(
    '/auth/credentials',
    {
      schema: op({
        operationId: 'createAuthCredential',
        tag,
        summary: 'Register an authentication credential on a wallet',
        permission: 'MANAGE',
        headers: SignedRetryHeaders,
        body: AuthCredentialCreateRequestOneOf,
        success: { 201: Type.Ref(AuthMethodResponse), 202: Type.Ref(AuthSignedRequestChallenge) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) =>
      answer(
        reply,
        await service.createCredential(
          request.ctx,
          request.body as CredentialCreateInput,
          signedHeaders(request.headers),
        ),
      ),
  );

  app.delete(
    '/auth/credentials/:id',
    {
      schema: op({
        operationId: 'revokeAuthCredential',
        tag,
        summary: 'Revoke an authentication credential',
        permission: 'MANAGE',
        params: IdParams,
        headers: SignedRetryHeaders,
        success: { 202: Type.Ref(AuthSignedRequestChallenge), 204: null },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) =>
      answer(reply, await service.revokeCredential(request.ctx, request.params.id, signedHeaders(request.headers))),
  );

  app.post(
    '/auth/credentials/:id/verify',
    {
      schema: op({
        operationId: 'verifyAuthCredential',
        tag,
        summary: 'Log in with a credential',
        permission: 'MANAGE',
        params: IdParams,
        headers: SignedRetryHeaders,
        body: AuthCredentialVerifyRequestOneOf,
        success: { 200: Type.Ref(AuthSession), 202: Type.Ref(AuthSignedRequestChallenge) },
        errors: [400, 401, 404, 429, 500],
      }),
    },
    async (request, reply) =>
      answer(
        reply,
        await logins.verifyCredential(
          request.ctx,
          request.params.id,
          request.body as CredentialVerifyInput,
          signedHeaders(request.headers),
        ),
      ),
  );

  app.post(
    '/auth/credentials/:id/challenge',
    {
      schema: op({
        operationId: 'challengeAuthCredential',
        tag,
        summary: 'Issue a new challenge for a credential',
        permission: 'MANAGE',
        params: IdParams,
        bodyOptional: true,
        body: Type.Ref(AuthCredentialChallengeRequest),
        success: { 200: AuthCredentialResponseOneOf },
        errors: [400, 401, 404, 429, 500],
      }),
    },
    async (request) => logins.challengeCredential(request.ctx, request.params.id, request.body ?? {}),
  );

  app.get(
    '/auth/sessions',
    {
      schema: op({
        operationId: 'listAuthSessions',
        tag,
        summary: "List a wallet's live sessions",
        permission: 'VIEW',
        querystring: AccountIdQuery,
        success: { 200: Type.Ref(SessionListResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listSessions(request.ctx, request.query.accountId),
  );

  app.delete(
    '/auth/sessions/:id',
    {
      schema: op({
        operationId: 'revokeAuthSession',
        tag,
        summary: 'Revoke a session',
        permission: 'MANAGE',
        params: IdParams,
        headers: SignedRetryHeaders,
        success: { 202: Type.Ref(AuthSignedRequestChallenge), 204: null },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) =>
      answer(reply, await service.revokeSession(request.ctx, request.params.id, signedHeaders(request.headers))),
  );

  app.post(
    '/auth/sessions/:id/refresh',
    {
      schema: op({
        operationId: 'refreshAuthSession',
        tag,
        summary: 'Replace a session with a new one',
        permission: 'MANAGE',
        params: IdParams,
        headers: SignedRetryHeaders,
        body: Type.Ref(AuthSessionRefreshRequest),
        success: { 201: Type.Ref(AuthSession), 202: Type.Ref(SignedRequestChallenge) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) =>
      answer(
        reply,
        await service.refreshSession(request.ctx, request.params.id, request.body, signedHeaders(request.headers)),
      ),
  );

  app.get(
    '/auth/delegated-keys',
    {
      schema: op({
        operationId: 'listDelegatedKeys',
        tag,
        summary: 'List delegated signing keys',
        permission: 'VIEW',
        querystring: DelegatedKeyListQuery,
        success: { 200: Type.Ref(DelegatedKeyListResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => actions.listDelegatedKeys(request.ctx, request.query),
  );

  app.post(
    '/auth/delegated-keys',
    {
      schema: op({
        operationId: 'createDelegatedKey',
        tag,
        summary: 'Create a delegated signing key for a card',
        permission: 'MANAGE',
        headers: SignedRetryHeaders,
        body: Type.Ref(DelegatedKeyCreateRequest),
        success: { 201: Type.Ref(DelegatedKey), 202: Type.Ref(DelegatedKeySignedRequestChallenge) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request, reply) =>
      answer(reply, await actions.createDelegatedKey(request.ctx, request.body, signedHeaders(request.headers))),
  );

  app.get(
    '/auth/delegated-keys/:id',
    {
      schema: op({
        operationId: 'getDelegatedKeyById',
        tag,
        summary: 'Get a delegated signing key',
        permission: 'VIEW',
        params: IdParams,
        success: { 200: Type.Ref(DelegatedKey) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => actions.getDelegatedKey(request.ctx, request.params.id),
  );

  app.delete(
    '/auth/delegated-keys/:id',
    {
      schema: op({
        operationId: 'revokeDelegatedKey',
        tag,
        summary: 'Revoke a delegated signing key',
        permission: 'MANAGE',
        params: IdParams,
        success: { 204: null },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) => {
      await actions.revokeDelegatedKey(request.ctx, request.params.id);
      reply.code(204);
    },
  );

  app.patch(
    '/internal-accounts/:id',
    {
      schema: op({
        operationId: 'updateInternalAccount',
        tag: 'Internal Accounts',
        summary: "Change an embedded wallet's privacy setting",
        permission: 'MANAGE',
        params: IdParams,
        headers: SignedRetryHeaders,
        body: Type.Ref(InternalAccountUpdateRequest),
        success: { 200: Type.Ref(InternalAccount), 202: Type.Ref(SignedRequestChallenge) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) =>
      answer(
        reply,
        await actions.updateWallet(request.ctx, request.params.id, request.body, signedHeaders(request.headers)),
      ),
  );

  app.post(
    '/internal-accounts/:id/export',
    {
      schema: op({
        operationId: 'exportInternalAccount',
        tag: 'Internal Accounts',
        summary: "Export an embedded wallet's recovery phrase, sealed to a client key",
        permission: 'MANAGE',
        params: IdParams,
        headers: SignedRetryHeaders,
        body: Type.Ref(InternalAccountExportRequest),
        success: { 200: Type.Ref(InternalAccountExportResponse), 202: Type.Ref(SignedRequestChallenge) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) =>
      answer(
        reply,
        await actions.exportWallet(request.ctx, request.params.id, request.body, signedHeaders(request.headers)),
      ),
  );
};
