import type { Selectable } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import { paginate, type PageRequest } from '../../db/pagination.js';
import type { CardRevealsTable, CardSimulationsTable, CardsTable } from '../../db/schema.js';

export type CardRow = Selectable<CardsTable>;
export type RevealRow = Selectable<CardRevealsTable>;

export async function insertCard(q: Queryable, row: CardRow): Promise<void> {
  await q.insertInto('cards').values(row).execute();
}

export async function findCard(q: Queryable, platformId: string, id: string, forUpdate = false) {
  let query = q.selectFrom('cards').selectAll().where('platform_id', '=', platformId).where('id', '=', id);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findByPlatformCardId(q: Queryable, platformId: string, platformCardId: string) {
  return q
    .selectFrom('cards')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('platform_card_id', '=', platformCardId)
    .executeTakeFirst();
}

export async function updateCard(
  q: Queryable,
  id: string,
  patch: Partial<
    Pick<CardRow, 'state' | 'state_reason' | 'funding_sources' | 'max_spend_per_transaction' | 'updated_at'>
  >,
): Promise<void> {
  await q.updateTable('cards').set(patch).where('id', '=', id).execute();
}

export interface CardFilters {
  cardholderId?: string | undefined;
  accountId?: string | undefined;
  platformCardId?: string | undefined;
  state?: string | undefined;
}

export async function listCards(q: Queryable, platformId: string, filters: CardFilters, page: PageRequest) {
  let query = q.selectFrom('cards').selectAll().where('platform_id', '=', platformId);
  if (filters.cardholderId !== undefined) query = query.where('cardholder_id', '=', filters.cardholderId);
  if (filters.platformCardId !== undefined) query = query.where('platform_card_id', '=', filters.platformCardId);
  if (filters.state !== undefined) query = query.where('state', '=', filters.state);
  // Ids are `InternalAccount:<uuid>`: no character of one can make a JSON string match another.
  if (filters.accountId !== undefined) {
    query = query.where('funding_sources', 'like', `%${JSON.stringify(filters.accountId).replace(/[%_\\]/g, '')}%`);
  }
  return paginate(query, 'cards', page);
}

// ------------------------------------------------------------------------------- reveals

export async function insertReveal(q: Queryable, row: RevealRow): Promise<void> {
  await q.insertInto('card_reveals').values(row).execute();
}

export async function findReveal(q: Queryable, tokenHash: string) {
  return q.selectFrom('card_reveals').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

// ------------------------------------------------------------------------------- simulations

export type SimulationRow = Selectable<CardSimulationsTable>;

export async function insertSimulation(q: Queryable, row: SimulationRow): Promise<void> {
  await q.insertInto('card_simulations').values(row).execute();
}

export async function findSimulation(q: Queryable, platformId: string, token: string, forUpdate = false) {
  let query = q
    .selectFrom('card_simulations')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('token', '=', token);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function endSimulation(
  q: Queryable,
  token: string,
  outcome: Pick<SimulationRow, 'status' | 'reason' | 'card_transaction_id' | 'updated_at'>,
): Promise<void> {
  await q.updateTable('card_simulations').set(outcome).where('token', '=', token).execute();
}
