// The SQL of fault rules: the rules of each kind, their counts, and the tags on the platform's
// row that say whether it has rules that can fire. note: kernel, like webhook delivery: the
// request hook and delivery read these rules on their own, below every area.

import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Queryable } from '../db/index.js';
import type { FaultRulesTable, WebhookFaultRulesTable } from '../db/schema.js';

export type RequestRuleRow = FaultRulesTable;
export type WebhookRuleRow = WebhookFaultRulesTable;

/**
 * The two kinds of rules, by table and the platform column that carries their tag. A
 * request rule's tag stays while one of its rules can fire; a webhook rule's while the
 * platform has any (a used-up `outOfOrder` rule may still hold a delivery back until the
 * object's next event, and the tag is what makes that event look for it).
 */
const KINDS = {
  request: { table: 'fault_rules', tag: 'fault_rules', liveOnly: true },
  webhook: { table: 'webhook_fault_rules', tag: 'webhook_fault_rules', liveOnly: false },
} as const;
export type RuleKind = keyof typeof KINDS;

function newTag(): string {
  return randomBytes(8).toString('hex');
}

/**
 * Gives the platform's rules of `kind` a new tag, or none (null) when it has none that count
 * (see KINDS): every instance that cached the rules by the old tag reads them again, and a
 * platform without rules skips them altogether.
 */
export async function refreshTag(q: Queryable, kind: RuleKind, platformId: string): Promise<string | null> {
  const { table, tag, liveOnly } = KINDS[kind];
  const live = liveOnly ? sql`AND (r.times IS NULL OR r.fired < r.times)` : sql``;
  const result = await sql<{ tag: string | null }>`
    UPDATE platforms SET ${sql.ref(tag)} = CASE WHEN EXISTS (
      SELECT 1 FROM ${sql.table(table)} r WHERE r.platform_id = ${platformId} ${live}
    ) THEN ${newTag()} ELSE NULL END
    WHERE id = ${platformId}
    RETURNING ${sql.ref(tag)} AS tag`.execute(q);
  return result.rows[0]?.tag ?? null;
}

export async function countRules(q: Queryable, kind: RuleKind, platformId: string): Promise<number> {
  const row = await q
    .selectFrom(KINDS[kind].table)
    .select(sql<string>`CAST(COUNT(*) AS TEXT)`.as('n'))
    .where('platform_id', '=', platformId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes one rule (`id`) or every rule of the platform; returns the ids deleted. */
export async function deleteRules(q: Queryable, kind: RuleKind, platformId: string, id?: string): Promise<string[]> {
  let query = q.deleteFrom(KINDS[kind].table).where('platform_id', '=', platformId);
  if (id !== undefined) query = query.where('id', '=', id);
  const rows = await query.returning('id').execute();
  return rows.map((row) => row.id);
}

// ----------------------------------------------------------------------------- request rules

export async function insertRequestRule(q: Queryable, row: RequestRuleRow): Promise<void> {
  await q.insertInto('fault_rules').values(row).execute();
}

export async function listRequestRules(q: Queryable, platformId: string): Promise<RequestRuleRow[]> {
  return q.selectFrom('fault_rules').selectAll().where('platform_id', '=', platformId).orderBy('id').execute();
}

/** The rules that can still fire, oldest first (the order they are tried in). */
export async function liveRequestRules(q: Queryable, platformId: string): Promise<RequestRuleRow[]> {
  return q
    .selectFrom('fault_rules')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where((w) => w.or([w('times', 'is', null), w('fired', '<', w.ref('times'))]))
    .orderBy('id')
    .execute();
}

/**
 * Counts a match of a rule that has a probability, if it can still fire; returns its number
 * (1 for the first match), which picks the draw. One statement, so concurrent matches on any
 * instance each get a number of their own.
 */
export async function countMatch(q: Queryable, id: string): Promise<number | undefined> {
  const row = await q
    .updateTable('fault_rules')
    .set({ matched: sql`matched + 1` })
    .where('id', '=', id)
    .where((w) => w.or([w('times', 'is', null), w('fired', '<', w.ref('times'))]))
    .returning('matched')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.matched);
}

/**
 * Counts a firing of the rule (and its match too, unless countMatch counted it), if it can
 * still fire: the `times` limit holds across instances, as the check and the count are one
 * statement. Returns the counts after it, or undefined when the rule is used up or gone.
 */
export async function countFiring(
  q: Queryable,
  id: string,
  matchCounted: boolean,
): Promise<{ fired: number; times: number | null } | undefined> {
  const row = await q
    .updateTable('fault_rules')
    .set(matchCounted ? { fired: sql`fired + 1` } : { fired: sql`fired + 1`, matched: sql`matched + 1` })
    .where('id', '=', id)
    .where((w) => w.or([w('times', 'is', null), w('fired', '<', w.ref('times'))]))
    .returning(['fired', 'times'])
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { fired: Number(row.fired), times: row.times === null ? null : Number(row.times) };
}

// ----------------------------------------------------------------------------- webhook rules

export async function insertWebhookRule(q: Queryable, row: WebhookRuleRow): Promise<void> {
  await q.insertInto('webhook_fault_rules').values(row).execute();
}

export async function listWebhookRules(q: Queryable, platformId: string): Promise<WebhookRuleRow[]> {
  return q.selectFrom('webhook_fault_rules').selectAll().where('platform_id', '=', platformId).orderBy('id').execute();
}

export async function liveWebhookRules(q: Queryable, platformId: string): Promise<WebhookRuleRow[]> {
  return q
    .selectFrom('webhook_fault_rules')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where((w) => w.or([w('times', 'is', null), w('fired', '<', w.ref('times'))]))
    .orderBy('id')
    .execute();
}

/** Counts a firing of a webhook rule if it can still fire (in the transaction of the event). */
export async function countWebhookFiring(q: Queryable, id: string): Promise<boolean> {
  const row = await q
    .updateTable('webhook_fault_rules')
    .set({ fired: sql`fired + 1` })
    .where('id', '=', id)
    .where((w) => w.or([w('times', 'is', null), w('fired', '<', w.ref('times'))]))
    .returning('fired')
    .executeTakeFirst();
  return row !== undefined;
}
