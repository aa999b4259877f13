// Fault rules a platform sets on itself: adding (every problem of a rule named in one 400),
// listing with their counts, removing. What the rules do is in requests.ts (Grid API
// requests) and src/events/faults.ts (webhook deliveries).

import { randomInt } from 'node:crypto';
import { iso } from '../clock.js';
import type { Tx } from '../db/index.js';
import { forgetPlatformCore } from '../db/platform-row.js';
import { releaseHeld } from '../events/delivery.js';
import { heldByRules } from '../events/faults.js';
import type { Ctx } from '../http/context.js';
import { apiError, type FieldError, FieldErrors } from '../http/errors.js';
import { newId } from '../ids.js';
import { isGridOperation } from './requests.js';
import {
  FAULT_EFFECTS,
  pathPatternProblem,
  RULES_PER_PLATFORM_MAX,
  type RequestRule,
  SEED_MAX,
  type WebhookRule,
} from './rules.js';
import * as store from './store.js';

/**
 * The schema's findings, to which a service's checks across fields add theirs: one entry per
 * field, so a check does not name again a field the schema already refused.
 */
function problemsFrom(schemaErrors: FieldError[]) {
  const errors = new FieldErrors();
  errors.errors.push(...schemaErrors);
  const named = (field: string) => errors.errors.some((e) => e.field === field || e.field.startsWith(`${field}.`));
  return {
    errors,
    named,
    add: (field: string, message: string) => {
      if (!named(field)) errors.add(field, message);
    },
  };
}

type Problems = ReturnType<typeof problemsFrom>;

type Body = Record<string, unknown>;

/** The checks across fields the schema cannot make, added to what the schema found. */
function checkRequestRule(body: Body, problems: Problems): void {
  const effects = FAULT_EFFECTS.filter((effect) => body[effect] !== undefined);
  if (effects.length === 0)
    problems.add('body', 'needs one effect: status, latencyMs, reset (true) or lostResponse (true)');
  if (effects.length > 1)
    for (const effect of effects)
      problems.add(effect, `is one of ${effects.length} effects given (${effects.join(', ')}); a rule has exactly one`);
  if (body.lostResponseStatus !== undefined && body.lostResponse === undefined)
    problems.add('lostResponseStatus', 'is only for a lostResponse rule');
  if (body.retryAfterSeconds !== undefined && body.status !== 429 && body.status !== 503)
    problems.add('retryAfterSeconds', 'is only for a status rule answering 429 or 503');
  if (body.seed !== undefined && body.probability === undefined)
    problems.add('seed', 'is only for a rule with a probability');
  if (typeof body.operationId === 'string' && !isGridOperation(body.operationId))
    problems.add('operationId', 'is not an operation of the Grid API that railyard serves');
  if (typeof body.path === 'string' && !problems.named('path')) {
    const problem = pathPatternProblem(body.path);
    if (problem !== null) problems.add('path', problem);
  }
}

function presentRequestRule(row: store.RequestRuleRow) {
  const rule = JSON.parse(row.rule) as RequestRule;
  return {
    id: row.id,
    ...rule,
    matchedCount: row.matched,
    firedCount: row.fired,
    active: row.times === null || row.fired < row.times,
    createdAt: row.created_at,
  };
}

function presentWebhookRule(row: store.WebhookRuleRow) {
  return {
    id: row.id,
    ...(JSON.parse(row.rule) as WebhookRule),
    firedCount: row.fired,
    active: row.times === null || row.fired < row.times,
    createdAt: row.created_at,
  };
}

function tooMany(kind: string) {
  return apiError(
    'CONFLICT',
    `This platform has ${RULES_PER_PLATFORM_MAX} ${kind} rules, the most it may hold; remove some first`,
  );
}

/**
 * In a transaction that wrote the platform's rules without this service (a reset wipes them):
 * the tags on its row follow what its rules now are. The caller clears the credentials it
 * cached once the transaction has committed (deps.authCache).
 */
export async function syncFaultTags(tx: Tx, platformId: string): Promise<void> {
  await store.refreshTag(tx, 'request', platformId);
  await store.refreshTag(tx, 'webhook', platformId);
  forgetPlatformCore(tx);
}

/** The tag on the platform row changed: the credentials this process verified carry the old one. */
function tagChanged(ctx: Ctx): void {
  ctx.deps.authCache?.clear();
}

// ----------------------------------------------------------------------------- request rules

export async function createFaultRule(ctx: Ctx, body: Body, schemaErrors: FieldError[]) {
  const problems = problemsFrom(schemaErrors);
  checkRequestRule(body, problems);
  problems.errors.throwIfAny();
  const input = body as RequestRule;
  // With a probability and no seed, one is drawn here and shown, so the run can be repeated.
  const rule: RequestRule =
    input.probability !== undefined && input.seed === undefined ? { ...input, seed: randomInt(SEED_MAX + 1) } : input;
  const row: store.RequestRuleRow = {
    id: newId('FaultRule'),
    platform_id: ctx.platformId,
    rule: JSON.stringify(rule),
    times: rule.times ?? null,
    matched: 0,
    fired: 0,
    created_at: iso(ctx.now),
  };
  await ctx.db.transaction(async (tx) => {
    if ((await store.countRules(tx, 'request', ctx.platformId)) >= RULES_PER_PLATFORM_MAX) throw tooMany('fault');
    await store.insertRequestRule(tx, row);
    await store.refreshTag(tx, 'request', ctx.platformId);
    forgetPlatformCore(tx);
  });
  tagChanged(ctx);
  return presentRequestRule(row);
}

export async function listFaultRules(ctx: Ctx) {
  return { data: (await store.listRequestRules(ctx.db.k, ctx.platformId)).map(presentRequestRule) };
}

/** Removes one rule, or every rule when `ruleId` is undefined. */
export async function deleteFaultRules(ctx: Ctx, ruleId?: string): Promise<void> {
  const removed = await ctx.db.transaction(async (tx) => {
    const ids = await store.deleteRules(tx, 'request', ctx.platformId, ruleId);
    if (ids.length > 0) {
      await store.refreshTag(tx, 'request', ctx.platformId);
      forgetPlatformCore(tx);
    }
    return ids;
  });
  if (ruleId !== undefined && removed.length === 0) throw apiError('REFERENCE_NOT_FOUND', `No fault rule ${ruleId}`);
  if (removed.length > 0) tagChanged(ctx);
}

// ----------------------------------------------------------------------------- webhook rules

export async function createWebhookFaultRule(ctx: Ctx, body: Body, schemaErrors: FieldError[]) {
  const problems = problemsFrom(schemaErrors);
  if (body.effect === 'delay' && body.delaySeconds === undefined) problems.add('delaySeconds', 'is required for delay');
  if (body.effect !== 'delay' && body.delaySeconds !== undefined)
    problems.add('delaySeconds', 'is only for a delay rule');
  problems.errors.throwIfAny();
  const rule = body as unknown as WebhookRule;
  const row: store.WebhookRuleRow = {
    id: newId('WebhookFaultRule'),
    platform_id: ctx.platformId,
    rule: JSON.stringify(rule),
    times: rule.times ?? null,
    fired: 0,
    created_at: iso(ctx.now),
  };
  await ctx.db.transaction(async (tx) => {
    if ((await store.countRules(tx, 'webhook', ctx.platformId)) >= RULES_PER_PLATFORM_MAX)
      throw tooMany('webhook fault');
    await store.insertWebhookRule(tx, row);
    await store.refreshTag(tx, 'webhook', ctx.platformId);
    forgetPlatformCore(tx);
  });
  return presentWebhookRule(row);
}

export async function listWebhookFaultRules(ctx: Ctx) {
  return { data: (await store.listWebhookRules(ctx.db.k, ctx.platformId)).map(presentWebhookRule) };
}

/**
 * Removes one webhook rule, or all of them. A delivery an `outOfOrder` rule among them still
 * holds back for an event that has not come is sent now.
 */
export async function deleteWebhookFaultRules(ctx: Ctx, ruleId?: string): Promise<void> {
  const removed = await ctx.db.transaction(async (tx) => {
    const ids = await store.deleteRules(tx, 'webhook', ctx.platformId, ruleId);
    if (ids.length === 0) return ids;
    for (const deliveryId of await heldByRules(tx, ctx.platformId, ids))
      await releaseHeld(tx, ctx.platformId, deliveryId, ctx.now);
    await store.refreshTag(tx, 'webhook', ctx.platformId);
    forgetPlatformCore(tx);
    return ids;
  });
  if (ruleId !== undefined && removed.length === 0)
    throw apiError('REFERENCE_NOT_FOUND', `No webhook fault rule ${ruleId}`);
}
