// What a platform's webhook fault rules do to its deliveries (the rules: src/faults/). A rule
// is chosen for a delivery when the delivery is made, in the transaction of its event, and is
// kept on the delivery (its `fault`), so that every try, on any instance, does the same:
// - `delay`: the first try is due `delaySeconds` later on the platform's sandbox clock;
// - `outOfOrder`: the delivery is held back until the next event of the same object has had
//   its first try (or for OUT_OF_ORDER_HOLD_MAX_MS of sandbox time, if none comes);
// - `drop`: the first try is not sent and counts as a failed one, so the retries go on;
// - `duplicate`: the try that reaches the receiver is sent a second time, the same bytes.
// The other deliveries keep their order (one object's events one after another).

import type { Queryable } from '../db/index.js';
import type { WebhookFaultEffect, WebhookRule } from '../faults/rules.js';
import * as rules from '../faults/store.js';
import type { DeliveryRow, EventRow } from './store.js';

/** How long an `outOfOrder` delivery waits for the next event of its object, on the sandbox clock. */
export const OUT_OF_ORDER_HOLD_MAX_MS = 60 * 60_000;

/** What webhook fault rules did to a delivery (its `fault` column, as JSON). */
export interface DeliveryFault {
  /** The rule that fired on the delivery, and its effect. */
  ruleId?: string;
  effect?: WebhookFaultEffect;
  delaySeconds?: number;
  /** outOfOrder: the delivery of the object's next event, sent before this one. */
  heldBehind?: string;
  /** Deliveries held back for this one (outOfOrder): they go once this one has had its first try. */
  releases?: string[];
}

export function faultOf(delivery: Pick<DeliveryRow, 'fault'>): DeliveryFault | undefined {
  return delivery.fault === null ? undefined : (JSON.parse(delivery.fault) as DeliveryFault);
}

interface CachedRules {
  tag: string;
  rules: { id: string; rule: WebhookRule }[];
}

const CACHED_PLATFORMS_MAX = 1000;
// note: keyed by platform id (never repeated across apps) and read by tag, like the request rules.
const CACHE = new Map<string, CachedRules>();

async function rulesOf(tx: Queryable, platformId: string, tag: string) {
  const cached = CACHE.get(platformId);
  if (cached?.tag === tag) return cached.rules;
  const rows = await rules.liveWebhookRules(tx, platformId);
  const loaded = rows.map((row) => ({ id: row.id, rule: JSON.parse(row.rule) as WebhookRule }));
  if (CACHE.size >= CACHED_PLATFORMS_MAX) CACHE.clear();
  CACHE.set(platformId, { tag, rules: loaded });
  return loaded;
}

/**
 * In the event's transaction, when the platform has webhook fault rules (`tag`): the rule that
 * fires on the event's delivery (counted in the same transaction, so it counts only if the
 * event commits), and the deliveries of the same object an `outOfOrder` rule holds back for
 * the next event, which this one now is. Undefined when nothing applies.
 */
export async function planDeliveryFault(
  tx: Queryable,
  event: EventRow,
  tag: string,
): Promise<DeliveryFault | undefined> {
  const fault: DeliveryFault = {};
  for (const { id, rule } of await rulesOf(tx, event.platform_id, tag)) {
    if (rule.eventType !== undefined && rule.eventType !== event.type) continue;
    if (!(await rules.countWebhookFiring(tx, id))) continue;
    fault.ruleId = id;
    fault.effect = rule.effect;
    if (rule.delaySeconds !== undefined) fault.delaySeconds = rule.delaySeconds;
    break;
  }
  const held = await heldForNext(tx, event.platform_id, event.resource_id);
  for (const delivery of held) {
    await tx
      .updateTable('webhook_deliveries')
      .set({ fault: JSON.stringify({ ...delivery.fault, heldBehind: event.id }) })
      .where('id', '=', delivery.id)
      .execute();
  }
  if (held.length > 0) fault.releases = held.map((delivery) => delivery.id);
  return Object.keys(fault).length === 0 ? undefined : fault;
}

/** Deliveries of the object that an `outOfOrder` rule holds back and that no later event releases yet. */
async function heldForNext(tx: Queryable, platformId: string, resourceId: string) {
  const rows = await tx
    .selectFrom('webhook_deliveries')
    .select(['id', 'fault'])
    .where('platform_id', '=', platformId)
    .where('resource_id', '=', resourceId)
    .where('status', '=', 'PENDING')
    .where('attempts', '=', 0)
    .where('fault', 'is not', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows
    .map((row) => ({ id: row.id, fault: JSON.parse(row.fault!) as DeliveryFault }))
    .filter(({ fault }) => fault.effect === 'outOfOrder' && fault.heldBehind === undefined);
}

/**
 * The deliveries of the platform that an `outOfOrder` rule of `ruleIds` holds back, never
 * tried, with no later event yet (one held behind a later event goes once that event's
 * delivery has had its try, rule or no rule).
 */
export async function heldByRules(tx: Queryable, platformId: string, ruleIds: readonly string[]): Promise<string[]> {
  if (ruleIds.length === 0) return [];
  const rows = await tx
    .selectFrom('webhook_deliveries')
    .select(['id', 'fault'])
    .where('platform_id', '=', platformId)
    .where('status', '=', 'PENDING')
    .where('attempts', '=', 0)
    .where('fault', 'is not', null)
    .execute();
  return rows
    .filter((row) => {
      const fault = JSON.parse(row.fault!) as DeliveryFault;
      return (
        fault.effect === 'outOfOrder' &&
        fault.heldBehind === undefined &&
        fault.ruleId !== undefined &&
        ruleIds.includes(fault.ruleId)
      );
    })
    .map((row) => row.id);
}
