import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  type InvitationCreateInput,
  InvitationCodeParams,
  UmaInvitation,
  UmaInvitationClaimRequest,
  UmaInvitationCreateRequest,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Invitations';

export const invitationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const base = (request: { protocol: string; host: string }) => `${request.protocol}://${request.host}`;

  app.post(
    '/invitations',
    {
      schema: op({
        operationId: 'createInvitation',
        tag,
        summary: "Invite someone by link, from a customer's UMA address",
        permission: 'MANAGE',
        body: Type.Ref(UmaInvitationCreateRequest),
        success: { 201: Type.Ref(UmaInvitation) },
        errors: [400, 401, 500],
      }),
    },
    async (request, reply) => {
      const invitation = await service.createInvitation(
        request.ctx,
        request.body as InvitationCreateInput,
        base(request),
      );
      reply.code(201);
      return invitation;
    },
  );

  app.get(
    '/invitations/:invitationCode',
    {
      schema: op({
        operationId: 'getInvitation',
        tag,
        summary: 'Get an invitation by its code',
        permission: 'VIEW',
        params: InvitationCodeParams,
        success: { 200: Type.Ref(UmaInvitation) },
        errors: [401, 404, 500],
      }),
    },
    async (request) => service.getInvitation(request.ctx, request.params.invitationCode, base(request)),
  );

  app.post(
    '/invitations/:invitationCode/claim',
    {
      schema: op({
        operationId: 'claimInvitation',
        tag,
        summary: 'Claim an invitation with the invitee’s UMA address',
        permission: 'MANAGE',
        params: InvitationCodeParams,
        body: Type.Ref(UmaInvitationClaimRequest),
        success: { 200: Type.Ref(UmaInvitation) },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) =>
      service.claimInvitation(request.ctx, request.params.invitationCode, request.body.inviteeUma, base(request)),
  );

  app.post(
    '/invitations/:invitationCode/cancel',
    {
      schema: op({
        operationId: 'cancelInvitation',
        tag,
        summary: 'Cancel a pending invitation',
        permission: 'MANAGE',
        params: InvitationCodeParams,
        success: { 200: Type.Ref(UmaInvitation) },
        errors: [400, 401, 403, 404, 500],
      }),
    },
    async (request) => service.cancelInvitation(request.ctx, request.params.invitationCode, base(request)),
  );
};
