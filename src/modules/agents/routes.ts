import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sendReply } from '../../http/command.js';
import { op } from '../../http/route.js';
import { IdempotencyHeaders, PageQuery } from '../../http/schemas.js';
import { attachedFieldErrors } from '../../http/validation.js';
import { signedHeaders } from '../wallet-auth/signing.js';
import { TransferInRequest, TransferOutRequest } from '../transfers/schemas.js';
import type { QuoteInput } from '../quotes/service.js';
import * as actions from './actions.js';
import {
  ExternalAccount,
  ExternalAccountCreateRequest,
  ExternalAccountIdParams,
  ExternalAccountList,
} from '../external-accounts/schemas.js';
import { INTERNAL_ACCOUNT_TYPES, InternalAccountList } from '../internal-accounts/schemas.js';
import { Quote, QuoteIdParams, QuoteRequest } from '../quotes/schemas.js';
import {
  TransactionIdParams,
  TransactionList,
  TransactionListQuery,
  TransactionOneOf,
} from '../transactions/schemas.js';
import { StringEnum } from '../../http/schemas.js';
import {
  ActionIdParams,
  AgentAction,
  AgentActionListResponse,
  AgentActionParams,
  AgentActionRejectRequest,
  AgentActionsQuery,
  AgentApprovalsQuery,
  Agent,
  AgentCreateRequest,
  AgentCreateResponse,
  AgentDeviceCode,
  AgentDeviceCodeRedeemResponse,
  AgentDeviceCodeStatusResponse,
  AgentIdParams,
  AgentListQuery,
  AgentListResponse,
  AgentPolicyUpdateRequest,
  AgentUpdateRequest,
  DeviceCodeParams,
  type PolicyInput,
  type PolicyPatch,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Agent Management';
const agentTag = 'Agent Operations';

export const agentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/agents',
    {
      schema: op({
        operationId: 'createAgent',
        tag,
        summary: 'Create an agent for a customer',
        permission: 'MANAGE',
        body: Type.Ref(AgentCreateRequest),
        success: { 201: Type.Ref(AgentCreateResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request, reply) => {
      reply.code(201);
      return service.createAgent(
        request.ctx,
        request.body as { name: string; customerId: string; policy: PolicyInput },
      );
    },
  );

  app.get(
    '/agents',
    {
      schema: op({
        operationId: 'listAgents',
        tag,
        summary: 'List agents',
        permission: 'VIEW',
        querystring: AgentListQuery,
        success: { 200: Type.Ref(AgentListResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listAgents(request.ctx, request.query),
  );

  app.get(
    '/agents/me',
    {
      schema: op({
        operationId: 'getAgentMe',
        tag: agentTag,
        summary: "The calling agent's profile, policy and usage",
        permission: 'VIEW',
        auth: 'agent',
        success: { 200: Type.Ref(Agent) },
        errors: [401, 500],
      }),
    },
    async (request) => service.getAgentMe(request.ctx),
  );

  app.get(
    '/agents/me/internal-accounts',
    {
      schema: op({
        operationId: 'agentListInternalAccounts',
        tag: agentTag,
        summary: "The agent's customer's internal accounts",
        permission: 'VIEW',
        auth: 'agent',
        querystring: Type.Object({
          currency: Type.Optional(Type.String()),
          type: Type.Optional(StringEnum(INTERNAL_ACCOUNT_TYPES)),
          ...PageQuery,
        }),
        success: { 200: Type.Ref(InternalAccountList) },
        errors: [401, 500],
      }),
    },
    async (request) => service.agentInternalAccounts(request.ctx, request.query),
  );

  app.get(
    '/agents/me/external-accounts',
    {
      schema: op({
        operationId: 'agentListExternalAccounts',
        tag: agentTag,
        summary: "The agent's customer's external accounts",
        permission: 'VIEW',
        auth: 'agent',
        querystring: Type.Object({ currency: Type.Optional(Type.String()), ...PageQuery }),
        success: { 200: Type.Ref(ExternalAccountList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.agentListExternalAccounts(request.ctx, request.query),
  );

  app.post(
    '/agents/me/external-accounts',
    {
      schema: op({
        operationId: 'agentCreateExternalAccount',
        tag: agentTag,
        summary: "Register an external account of the agent's customer",
        permission: 'VIEW',
        auth: 'agent',
        body: Type.Ref(ExternalAccountCreateRequest),
        success: { 201: Type.Ref(ExternalAccount) },
        errors: [400, 401, 409, 500],
      }),
    },
    async (request, reply) => {
      const account = await service.agentCreateExternalAccount(request.ctx, request.body);
      reply.code(201);
      return account;
    },
  );

  app.get(
    '/agents/me/external-accounts/:externalAccountId',
    {
      schema: op({
        operationId: 'agentGetExternalAccount',
        tag: agentTag,
        summary: "Get an external account of the agent's customer",
        permission: 'VIEW',
        auth: 'agent',
        params: ExternalAccountIdParams,
        success: { 200: Type.Ref(ExternalAccount) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.agentGetExternalAccount(request.ctx, request.params.externalAccountId),
  );

  app.delete(
    '/agents/me/external-accounts/:externalAccountId',
    {
      schema: op({
        operationId: 'agentDeleteExternalAccount',
        tag: agentTag,
        summary: "Delete an external account of the agent's customer",
        permission: 'VIEW',
        auth: 'agent',
        params: ExternalAccountIdParams,
        success: { 204: null },
        errors: [401, 404, 500],
      }),
    },
    async (request, reply) => {
      await service.agentDeleteExternalAccount(request.ctx, request.params.externalAccountId);
      reply.code(204);
    },
  );

  app.get(
    '/agents/me/transactions',
    {
      schema: op({
        operationId: 'agentListTransactions',
        tag: agentTag,
        summary: "The agent's customer's transactions",
        permission: 'VIEW',
        auth: 'agent',
        querystring: Type.Omit(TransactionListQuery, ['customerId', 'platformCustomerId']),
        success: { 200: Type.Ref(TransactionList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.agentListTransactions(request.ctx, request.query),
  );

  app.get(
    '/agents/me/transactions/:transactionId',
    {
      schema: op({
        operationId: 'agentGetTransaction',
        tag: agentTag,
        summary: "Get a transaction of the agent's customer",
        permission: 'VIEW',
        auth: 'agent',
        params: TransactionIdParams,
        success: { 200: Type.Ref(TransactionOneOf) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.agentGetTransaction(request.ctx, request.params.transactionId),
  );

  app.get(
    '/agents/me/quotes/:quoteId',
    {
      schema: op({
        operationId: 'agentGetQuote',
        tag: agentTag,
        summary: "Get a quote of the agent's customer",
        permission: 'VIEW',
        auth: 'agent',
        params: QuoteIdParams,
        success: { 200: Type.Ref(Quote) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.agentGetQuote(request.ctx, request.params.quoteId),
  );

  app.get(
    '/agents/approvals',
    {
      schema: op({
        operationId: 'listAgentApprovals',
        tag,
        summary: 'Agent actions waiting for approval',
        permission: 'VIEW',
        querystring: AgentApprovalsQuery,
        success: { 200: Type.Ref(AgentActionListResponse) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => actions.listApprovals(request.ctx, request.query),
  );

  app.post(
    '/agents/:agentId/actions/:actionId/approve',
    {
      schema: op({
        operationId: 'approveAgentAction',
        tag,
        summary: 'Approve an agent action and run it',
        permission: 'TRANSACT',
        params: AgentActionParams,
        success: { 200: Type.Ref(AgentAction) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => actions.approveAction(request.ctx, request.params.agentId, request.params.actionId),
  );

  app.post(
    '/agents/:agentId/actions/:actionId/reject',
    {
      schema: op({
        operationId: 'rejectAgentAction',
        tag,
        summary: 'Reject an agent action',
        permission: 'TRANSACT',
        params: AgentActionParams,
        bodyOptional: true,
        body: Type.Ref(AgentActionRejectRequest),
        success: { 200: Type.Ref(AgentAction) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) =>
      actions.rejectAction(
        request.ctx,
        request.params.agentId,
        request.params.actionId,
        (request.body as { reason?: string } | undefined)?.reason,
      ),
  );

  app.post(
    '/agents/me/quotes',
    {
      schema: op({
        operationId: 'agentCreateQuote',
        tag: agentTag,
        summary: "Quote a cross-currency payment for the agent's customer",
        permission: 'TRANSACT',
        auth: 'agent',
        headers: IdempotencyHeaders,
        body: Type.Ref(QuoteRequest),
        success: { 201: Type.Ref(Quote) },
        errors: [400, 401, 403, 412, 424, 500],
      }),
      // The schema's findings join the service's own checks, so one 400 names every field.
      attachValidation: true,
    },
    async (request, reply) =>
      sendReply(
        reply,
        await actions.agentCreateQuote(
          request.ctx,
          request.body as QuoteInput,
          request.headers['idempotency-key'],
          attachedFieldErrors(request.validationError, { schema: IdempotencyHeaders, value: request.headers }),
        ),
      ),
  );

  app.post(
    '/agents/me/quotes/:quoteId/execute',
    {
      schema: op({
        operationId: 'agentExecuteQuote',
        tag: agentTag,
        summary: "Execute a quote of the agent's customer, or ask for approval to",
        permission: 'TRANSACT',
        auth: 'agent',
        params: QuoteIdParams,
        headers: Type.Composite([
          IdempotencyHeaders,
          Type.Object({ 'grid-wallet-signature': Type.Optional(Type.String()) }),
        ]),
        success: { 200: Type.Ref(AgentAction) },
        errors: [400, 401, 403, 404, 409, 500],
      }),
    },
    async (request, reply) =>
      sendReply(
        reply,
        await actions.agentExecuteQuote(
          request.ctx,
          request.params.quoteId,
          request.headers['idempotency-key'],
          signedHeaders(request.headers).signature,
        ),
      ),
  );

  app.post(
    '/agents/me/transfer-out',
    {
      schema: op({
        operationId: 'agentCreateTransferOut',
        tag: agentTag,
        summary: "Send money from the agent's customer's internal account to its external account",
        permission: 'TRANSACT',
        auth: 'agent',
        headers: IdempotencyHeaders,
        body: Type.Ref(TransferOutRequest),
        success: { 201: Type.Ref(AgentAction) },
        errors: [400, 401, 403, 404, 500],
      }),
    },
    async (request, reply) =>
      sendReply(
        reply,
        await actions.agentCreateTransferOut(request.ctx, request.body, request.headers['idempotency-key']),
      ),
  );

  app.post(
    '/agents/me/transfer-in',
    {
      schema: op({
        operationId: 'agentCreateTransferIn',
        tag: agentTag,
        summary: "Pull money from the agent's customer's bank account into its internal account",
        permission: 'TRANSACT',
        auth: 'agent',
        headers: IdempotencyHeaders,
        body: Type.Ref(TransferInRequest),
        success: { 201: Type.Ref(AgentAction) },
        errors: [400, 401, 403, 404, 500],
      }),
    },
    async (request, reply) =>
      sendReply(
        reply,
        await actions.agentCreateTransferIn(request.ctx, request.body, request.headers['idempotency-key']),
      ),
  );

  app.get(
    '/agents/me/actions',
    {
      schema: op({
        operationId: 'agentListActions',
        tag: agentTag,
        summary: "The agent's own actions",
        permission: 'VIEW',
        auth: 'agent',
        querystring: AgentActionsQuery,
        success: { 200: Type.Ref(AgentActionListResponse) },
        errors: [401, 500],
      }),
    },
    async (request) => actions.agentListActions(request.ctx, request.query),
  );

  app.get(
    '/agents/me/actions/:actionId',
    {
      schema: op({
        operationId: 'agentGetAction',
        tag: agentTag,
        summary: "Get one of the agent's actions",
        permission: 'VIEW',
        auth: 'agent',
        params: ActionIdParams,
        success: { 200: Type.Ref(AgentAction) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => actions.agentGetAction(request.ctx, request.params.actionId),
  );

  app.get(
    '/agents/:agentId',
    {
      schema: op({
        operationId: 'getAgentById',
        tag,
        summary: 'Get an agent',
        permission: 'VIEW',
        params: AgentIdParams,
        success: { 200: Type.Ref(Agent) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getAgent(request.ctx, request.params.agentId),
  );

  app.patch(
    '/agents/:agentId',
    {
      schema: op({
        operationId: 'updateAgent',
        tag,
        summary: 'Rename, pause or resume an agent',
        permission: 'MANAGE',
        params: AgentIdParams,
        body: Type.Ref(AgentUpdateRequest),
        success: { 200: Type.Ref(Agent) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) => service.updateAgent(request.ctx, request.params.agentId, request.body),
  );

  app.delete(
    '/agents/:agentId',
    {
      schema: op({
        operationId: 'deleteAgent',
        tag,
        summary: 'Delete an agent and end its access',
        permission: 'MANAGE',
        params: AgentIdParams,
        success: { 204: null },
        errors: [401, 404, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteAgent(request.ctx, request.params.agentId);
      reply.code(204);
    },
  );

  app.patch(
    '/agents/:agentId/policy',
    {
      schema: op({
        operationId: 'updateAgentPolicy',
        tag,
        summary: "Change an agent's policy",
        permission: 'MANAGE',
        params: AgentIdParams,
        body: Type.Ref(AgentPolicyUpdateRequest),
        success: { 200: Type.Ref(Agent) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) => service.updateAgentPolicy(request.ctx, request.params.agentId, request.body as PolicyPatch),
  );

  app.post(
    '/agents/:agentId/device-codes',
    {
      schema: op({
        operationId: 'regenerateAgentDeviceCode',
        tag,
        summary: 'Issue a new device code for an agent not yet connected',
        permission: 'MANAGE',
        params: AgentIdParams,
        success: { 201: Type.Ref(AgentDeviceCode) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      reply.code(201);
      return service.regenerateDeviceCode(request.ctx, request.params.agentId);
    },
  );

  app.get(
    '/agents/device-codes/:code/status',
    {
      schema: op({
        operationId: 'getAgentDeviceCodeStatus',
        tag,
        summary: 'Whether a device code was redeemed',
        permission: 'VIEW',
        params: DeviceCodeParams,
        success: { 200: Type.Ref(AgentDeviceCodeStatusResponse) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.deviceCodeStatus(request.ctx, request.params.code),
  );

  app.post(
    '/agents/device-codes/:code/redeem',
    {
      schema: op({
        operationId: 'redeemAgentDeviceCode',
        tag,
        summary: "Redeem a device code for the agent's access token",
        permission: null,
        params: DeviceCodeParams,
        success: { 200: Type.Ref(AgentDeviceCodeRedeemResponse) },
        errors: [400, 404, 500],
      }),
    },
    async (request) => service.redeemDeviceCode(request.server.deps, request.params.code),
  );
};
