// The platform's fault rules, under /_railyard: /faults for its Grid API requests,
// /webhook-faults for its webhook deliveries (docs/testing-failure.md).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { op } from '../http/route.js';
import { attachedFieldErrors } from '../http/validation.js';
import {
  FaultRule,
  FaultRuleInput,
  FaultRuleList,
  FaultRuleParams,
  WebhookFaultRule,
  WebhookFaultRuleInput,
  WebhookFaultRuleList,
} from './schemas.js';
import * as service from './service.js';

const tag = 'Railyard';

export const faultRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/faults',
    {
      schema: op({
        operationId: 'railyardCreateFaultRule',
        tag,
        summary: "Add a fault rule on this platform's Grid API requests",
        permission: 'MANAGE',
        body: FaultRuleInput,
        success: { 201: FaultRule },
        errors: [400, 401, 409, 500],
      }),
      // The schema's findings join the service's checks across fields, so one 400 names every field.
      attachValidation: true,
    },
    async (request, reply) => {
      const rule = await service.createFaultRule(
        request.ctx,
        (request.body ?? {}) as Record<string, unknown>,
        attachedFieldErrors(request.validationError),
      );
      reply.code(201);
      return rule;
    },
  );

  app.get(
    '/faults',
    {
      schema: op({
        operationId: 'railyardListFaultRules',
        tag,
        summary: "This platform's fault rules on its requests, with how often each fired",
        permission: 'VIEW',
        success: { 200: FaultRuleList },
        errors: [401, 500],
      }),
    },
    async (request) => service.listFaultRules(request.ctx),
  );

  app.delete(
    '/faults/:ruleId',
    {
      schema: op({
        operationId: 'railyardDeleteFaultRule',
        tag,
        summary: 'Remove a fault rule',
        permission: 'MANAGE',
        params: FaultRuleParams,
        success: { 204: null },
        errors: [401, 404, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteFaultRules(request.ctx, request.params.ruleId);
      reply.code(204);
    },
  );

  app.delete(
    '/faults',
    {
      schema: op({
        operationId: 'railyardDeleteFaultRules',
        tag,
        summary: "Remove every fault rule on this platform's requests",
        permission: 'MANAGE',
        success: { 204: null },
        errors: [401, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteFaultRules(request.ctx);
      reply.code(204);
    },
  );

  app.post(
    '/webhook-faults',
    {
      schema: op({
        operationId: 'railyardCreateWebhookFaultRule',
        tag,
        summary: "Add a fault rule on this platform's webhook deliveries",
        permission: 'MANAGE',
        body: WebhookFaultRuleInput,
        success: { 201: WebhookFaultRule },
        errors: [400, 401, 409, 500],
      }),
      attachValidation: true,
    },
    async (request, reply) => {
      const rule = await service.createWebhookFaultRule(
        request.ctx,
        (request.body ?? {}) as Record<string, unknown>,
        attachedFieldErrors(request.validationError),
      );
      reply.code(201);
      return rule;
    },
  );

  app.get(
    '/webhook-faults',
    {
      schema: op({
        operationId: 'railyardListWebhookFaultRules',
        tag,
        summary: "This platform's fault rules on its webhook deliveries, with how often each fired",
        permission: 'VIEW',
        success: { 200: WebhookFaultRuleList },
        errors: [401, 500],
      }),
    },
    async (request) => service.listWebhookFaultRules(request.ctx),
  );

  app.delete(
    '/webhook-faults/:ruleId',
    {
      schema: op({
        operationId: 'railyardDeleteWebhookFaultRule',
        tag,
        summary: 'Remove a webhook fault rule (a delivery it holds back goes now)',
        permission: 'MANAGE',
        params: FaultRuleParams,
        success: { 204: null },
        errors: [401, 404, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteWebhookFaultRules(request.ctx, request.params.ruleId);
      reply.code(204);
    },
  );

  app.delete(
    '/webhook-faults',
    {
      schema: op({
        operationId: 'railyardDeleteWebhookFaultRules',
        tag,
        summary: "Remove every fault rule on this platform's webhook deliveries",
        permission: 'MANAGE',
        success: { 204: null },
        errors: [401, 500],
      }),
    },
    async (request, reply) => {
      await service.deleteWebhookFaultRules(request.ctx);
      reply.code(204);
    },
  );
};
