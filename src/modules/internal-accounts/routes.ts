import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  AccountIdParams,
  CustomerInternalAccountListQuery,
  InternalAccount,
  InternalAccountList,
  PlatformInternalAccountList,
  PlatformInternalAccountListQuery,
  SandboxFundRequest,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Internal Accounts';

export const internalAccountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/customers/internal-accounts',
    {
      schema: op({
        operationId: 'listCustomerInternalAccounts',
        tag,
        summary: "List customers' internal accounts",
        permission: 'VIEW',
        querystring: CustomerInternalAccountListQuery,
        success: { 200: Type.Ref(InternalAccountList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listCustomerInternalAccounts(request.ctx, request.query),
  );

  app.get(
    '/platform/internal-accounts',
    {
      schema: op({
        operationId: 'listPlatformInternalAccounts',
        tag,
        summary: "List the platform's internal accounts",
        permission: 'VIEW',
        querystring: PlatformInternalAccountListQuery,
        success: { 200: Type.Ref(PlatformInternalAccountList) },
        errors: [400, 401, 500],
      }),
    },
    async (request) => service.listPlatformInternalAccounts(request.ctx, request.query),
  );

  app.post(
    '/sandbox/internal-accounts/:accountId/fund',
    {
      schema: op({
        operationId: 'sandboxFundInternalAccount',
        tag: 'Sandbox',
        summary: 'Add sandbox funds to an internal account',
        permission: 'TRANSACT',
        params: AccountIdParams,
        body: Type.Ref(SandboxFundRequest),
        success: { 200: Type.Ref(InternalAccount) },
        errors: [400, 401, 403, 404, 500],
      }),
    },
    async (request) => service.sandboxFundInternalAccount(request.ctx, request.params.accountId, request.body.amount),
  );
};
