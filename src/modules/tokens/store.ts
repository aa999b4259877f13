import type { Queryable } from '../../db/index.js';
import { createdUpdatedBounds, paginate, type PageRequest } from '../../db/pagination.js';
import { preparedInsert } from '../../db/prepared.js';
import type { ApiTokensTable } from '../../db/schema.js';

export type TokenRow = ApiTokensTable;

const TOKEN_COLUMNS = [
  'id',
  'platform_id',
  'name',
  'permissions',
  'client_id',
  'secret_salt',
  'secret_hash',
  'created_at',
  'updated_at',
  'deleted_at',
] as const;

// A token has a fresh id and nothing reads it back in the transaction that issues it: inside
// one on PostgreSQL (a new platform's), its row travels with the next statement.
const tokenInsert = preparedInsert('api_tokens', TOKEN_COLUMNS, 1, { deferred: true });

export async function insertToken(q: Queryable, row: TokenRow): Promise<void> {
  await tokenInsert.one(q, row);
}

export async function findToken(q: Queryable, platformId: string, id: string): Promise<TokenRow | undefined> {
  return q
    .selectFrom('api_tokens')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function findTokenByClientId(q: Queryable, clientId: string): Promise<TokenRow | undefined> {
  return q.selectFrom('api_tokens').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

export interface TokenFilters {
  name?: string | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
}

export async function listTokens(q: Queryable, platformId: string, filters: TokenFilters, page: PageRequest) {
  let query = q
    .selectFrom('api_tokens')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('deleted_at', 'is', null);
  if (filters.name !== undefined) query = query.where('name', '=', filters.name);
  for (const [column, op, value] of createdUpdatedBounds(filters)) query = query.where(column, op, value);
  return paginate(query, 'api_tokens', page);
}

export async function markTokenDeleted(q: Queryable, platformId: string, id: string, now: string): Promise<boolean> {
  const result = await q
    .updateTable('api_tokens')
    .set({ deleted_at: now, updated_at: now })
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Re-pins a token's secret (bootstrap with GRID_CLIENT_SECRET) and revives it if deleted. */
export async function resetTokenSecret(
  q: Queryable,
  id: string,
  salt: string,
  hash: string,
  now: string,
): Promise<void> {
  await q
    .updateTable('api_tokens')
    .set({ secret_salt: salt, secret_hash: hash, deleted_at: null, updated_at: now })
    .where('id', '=', id)
    .execute();
}
