// The platform's fault rules, under /_railyard: /faults for its Grid API requests,
// /webhook-faults for its webhook deliveries (docs/testing-failure.md). Each kind has the same
// four operations: add, list, remove one, remove all.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../http/context.js';
import type { FieldError } from '../http/errors.js';
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

interface RuleKind {
  path: string;
  /** The operationIds: railyard<Verb><Noun>. */
  noun: string;
  /** What the rules act on, for the summaries. */
  on: string;
  input: TSchema;
  rule: TSchema;
  list: TSchema;
  create(ctx: Ctx, body: Record<string, unknown>, schemaErrors: FieldError[]): Promise<unknown>;
  listRules(ctx: Ctx): Promise<unknown>;
  remove(ctx: Ctx, ruleId?: string): Promise<void>;
}

function ruleRoutes(app: FastifyInstance, kind: RuleKind): void {
  app.post(
    kind.path,
    {
      schema: op({
        operationId: `railyardCreate${kind.noun}`,
        tag,
        summary: `Add a fault rule on this platform's ${kind.on}`,
        permission: 'MANAGE',
        body: kind.input,
        success: { 201: kind.rule },
        errors: [400, 401, 409, 500],
      }),
      // The schema's findings join the service's checks across fields, so one 400 names every field.
      attachValidation: true,
    },
    async (request, reply) => {
      const rule = await kind.create(
        request.ctx,
        (request.body ?? {}) as Record<string, unknown>,
        attachedFieldErrors(request.validationError),
      );
      reply.code(201);
      return rule;
    },
  );

  app.get(
    kind.path,
    {
      schema: op({
        operationId: `railyardList${kind.noun}s`,
        tag,
        summary: `This platform's fault rules on its ${kind.on}, with how often each fired`,
        permission: 'VIEW',
        success: { 200: kind.list },
        errors: [401, 500],
      }),
    },
    async (request) => kind.listRules(request.ctx),
  );

  app.delete(
    `${kind.path}/:ruleId`,
    {
      schema: op({
        operationId: `railyardDelete${kind.noun}`,
        tag,
        summary: `Remove a fault rule on ${kind.on}`,
        permission: 'MANAGE',
        params: FaultRuleParams,
        success: { 204: null },
        errors: [401, 404, 500],
      }),
    },
    async (request, reply) => {
      await kind.remove(request.ctx, (request.params as { ruleId: string }).ruleId);
      reply.code(204);
    },
  );

  app.delete(
    kind.path,
    {
      schema: op({
        operationId: `railyardDelete${kind.noun}s`,
        tag,
        summary: `Remove every fault rule on this platform's ${kind.on}`,
        permission: 'MANAGE',
        success: { 204: null },
        errors: [401, 500],
      }),
    },
    async (request, reply) => {
      await kind.remove(request.ctx);
      reply.code(204);
    },
  );
}

export const faultRoutes: FastifyPluginAsyncTypebox = async (app) => {
  ruleRoutes(app, {
    path: '/faults',
    noun: 'FaultRule',
    on: 'Grid API requests',
    input: FaultRuleInput,
    rule: FaultRule,
    list: FaultRuleList,
    create: service.createFaultRule,
    listRules: service.listFaultRules,
    remove: service.deleteFaultRules,
  });
  // Removing one that holds a delivery back (outOfOrder) sends that delivery now.
  ruleRoutes(app, {
    path: '/webhook-faults',
    noun: 'WebhookFaultRule',
    on: 'webhook deliveries',
    input: WebhookFaultRuleInput,
    rule: WebhookFaultRule,
    list: WebhookFaultRuleList,
    create: service.createWebhookFaultRule,
    listRules: service.listWebhookFaultRules,
    remove: service.deleteWebhookFaultRules,
  });
};
