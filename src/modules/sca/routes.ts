import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import {
  BeneficiaryTrustConfirm,
  BeneficiaryTrustConfirmRequest,
  BeneficiaryTrustStart,
  CredentialIdParams,
  ExternalAccountIdParams,
  type ProofInput,
  CustomerIdQuery,
  RecordSecurityEventRequest,
  RecordSecurityEventResponse,
  ScaFactorConfirmRequest,
  ScaFactorConfirmResponse,
  type ScaFactorConfirmInput,
  ScaFactorEnrollRequest,
  ScaFactorEnrollStart,
  ScaFactorList,
  ScaLoginComplete,
  ScaLoginCompleteRequest,
  ScaLoginStart,
  ScaLoginStartRequest,
  ResetIdParams,
  TwoFactorResetCompleteRequest,
  TwoFactorResetStart,
  TwoFactorResetStartRequest,
  TwoFactorResetStatus,
} from './schemas.js';
import * as reset from './reset.js';
import * as service from './service.js';
import * as trust from './trust.js';

const tag = 'Strong Customer Authentication';
/** For the operations that declare no 400: a missing customerId is answered as an unknown customer (404). */
const LenientCustomerIdQuery = Type.Object({ customerId: Type.Optional(Type.String()) });

export const scaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sca/factors',
    {
      schema: op({
        operationId: 'listScaFactors',
        tag,
        summary: "The customer's SCA factors",
        permission: 'VIEW',
        querystring: LenientCustomerIdQuery,
        success: { 200: Type.Ref(ScaFactorList) },
        errors: [401, 404, 409, 500],
      }),
    },
    async (request) => service.listFactors(request.ctx, request.query.customerId),
  );

  app.post(
    '/sca/factors',
    {
      schema: op({
        operationId: 'startScaFactorEnrollment',
        tag,
        summary: 'Start enrolling a TOTP or passkey factor',
        permission: 'MANAGE',
        querystring: CustomerIdQuery,
        body: Type.Ref(ScaFactorEnrollRequest),
        success: { 200: Type.Ref(ScaFactorEnrollStart) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) =>
      service.startEnrollment(request.ctx, request.query.customerId, request.body as { type: 'TOTP' | 'PASSKEY' }),
  );

  app.post(
    '/sca/factors/confirm',
    {
      schema: op({
        operationId: 'confirmScaFactorEnrollment',
        tag,
        summary: 'Confirm a factor enrollment with its first proof',
        permission: 'MANAGE',
        querystring: CustomerIdQuery,
        body: Type.Ref(ScaFactorConfirmRequest),
        success: { 200: Type.Ref(ScaFactorConfirmResponse) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) =>
      service.confirmEnrollment(request.ctx, request.query.customerId, request.body as ScaFactorConfirmInput),
  );

  app.delete(
    '/sca/factors/:credentialId',
    {
      schema: op({
        operationId: 'deleteScaFactor',
        tag,
        summary: "Delete the customer's passkey factor",
        permission: 'MANAGE',
        params: CredentialIdParams,
        querystring: LenientCustomerIdQuery,
        success: { 204: null },
        errors: [401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteFactor(request.ctx, request.query.customerId, request.params.credentialId);
      reply.code(204);
    },
  );

  app.post(
    '/sca/login/start',
    {
      schema: op({
        operationId: 'startScaLogin',
        tag,
        summary: 'Start an SCA login with an enrolled factor',
        permission: 'MANAGE',
        querystring: CustomerIdQuery,
        body: Type.Ref(ScaLoginStartRequest),
        success: { 200: Type.Ref(ScaLoginStart) },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => service.startLogin(request.ctx, request.query.customerId, request.body),
  );

  app.post(
    '/sca/login/complete',
    {
      schema: op({
        operationId: 'completeScaLogin',
        tag,
        summary: 'Complete an SCA login and open an SCA session',
        permission: 'MANAGE',
        querystring: CustomerIdQuery,
        body: Type.Ref(ScaLoginCompleteRequest),
        success: { 200: Type.Ref(ScaLoginComplete) },
        errors: [400, 401, 404, 409, 423, 500],
      }),
    },
    async (request) =>
      service.completeLogin(request.ctx, request.query.customerId, request.body as service.LoginCompleteInput),
  );

  app.post(
    '/sca/record-event',
    {
      schema: op({
        operationId: 'recordSecurityEvent',
        tag,
        summary: 'Record a security event of the customer',
        permission: 'MANAGE',
        querystring: CustomerIdQuery,
        body: Type.Ref(RecordSecurityEventRequest),
        success: { 200: Type.Ref(RecordSecurityEventResponse) },
        errors: [400, 401, 404, 409, 423, 500],
      }),
    },
    async (request) => service.recordSecurityEvent(request.ctx, request.query.customerId, request.body),
  );
  for (const change of ['TRUST', 'UNTRUST'] as const) {
    const path = change === 'TRUST' ? 'trust' : 'untrust';
    const name = change === 'TRUST' ? 'BeneficiaryTrust' : 'BeneficiaryUntrust';
    app.post(
      `/customers/external-accounts/:externalAccountId/${path}`,
      {
        schema: op({
          operationId: `start${name}`,
          tag,
          summary: change === 'TRUST' ? 'Start trusting a beneficiary' : 'Start untrusting a beneficiary',
          permission: 'MANAGE',
          params: ExternalAccountIdParams,
          success: { 200: Type.Ref(BeneficiaryTrustStart) },
          errors: [400, 401, 404, 409, 500],
        }),
      },
      async (request) => trust.startChange(request.ctx, request.params.externalAccountId, change),
    );
    app.post(
      `/customers/external-accounts/:externalAccountId/${path}/confirm`,
      {
        schema: op({
          operationId: `confirm${name}`,
          tag,
          summary: change === 'TRUST' ? 'Confirm trusting a beneficiary' : 'Confirm untrusting a beneficiary',
          permission: 'MANAGE',
          params: ExternalAccountIdParams,
          body: Type.Ref(BeneficiaryTrustConfirmRequest),
          success: { 200: Type.Ref(BeneficiaryTrustConfirm) },
          errors: [400, 401, 404, 409, 500],
        }),
      },
      async (request) =>
        trust.confirmChange(request.ctx, request.params.externalAccountId, change, request.body as ProofInput),
    );
  }
  app.post(
    '/sca/factors/reset',
    {
      schema: op({
        operationId: 'startTwoFactorReset',
        tag,
        summary: 'Start recovering a lost factor through a liveness check',
        permission: 'MANAGE',
        querystring: CustomerIdQuery,
        body: Type.Ref(TwoFactorResetStartRequest),
        success: { 201: Type.Ref(TwoFactorResetStart) },
        errors: [400, 401, 404, 409, 429, 500],
      }),
    },
    async (request, reply) => {
      const started = await reset.startReset(
        request.ctx,
        request.query.customerId,
        request.body,
        `${request.protocol}://${request.host}`,
      );
      reply.code(201);
      return started;
    },
  );

  app.get(
    '/sca/factors/reset/:resetId',
    {
      schema: op({
        operationId: 'getTwoFactorResetStatus',
        tag,
        summary: 'Where a 2FA reset stands',
        permission: 'VIEW',
        params: ResetIdParams,
        querystring: LenientCustomerIdQuery,
        success: { 200: Type.Ref(TwoFactorResetStatus) },
        errors: [401, 404, 409, 500],
      }),
    },
    async (request) => reset.getReset(request.ctx, request.query.customerId, request.params.resetId),
  );

  app.post(
    '/sca/factors/reset/:resetId/complete',
    {
      schema: op({
        operationId: 'completeTwoFactorReset',
        tag,
        summary: 'Complete a 2FA reset whose liveness check passed',
        permission: 'MANAGE',
        params: ResetIdParams,
        querystring: CustomerIdQuery,
        bodyOptional: true,
        body: Type.Ref(TwoFactorResetCompleteRequest),
        success: { 204: null },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      await reset.completeReset(
        request.ctx,
        request.query.customerId,
        request.params.resetId,
        request.body as reset.ResetCompleteInput | undefined,
      );
      reply.code(204);
    },
  );
};
