import { sql, type Selectable } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import { paginate, type PageRequest } from '../../db/pagination.js';
import type { StablecoinOperationsTable, StablecoinProviderAccountsTable, StablecoinsTable } from '../../db/schema.js';

export type LinkRow = Selectable<StablecoinProviderAccountsTable>;
export type StablecoinRow = Selectable<StablecoinsTable>;
export type OperationRow = Selectable<StablecoinOperationsTable>;

/**
 * Takes the platform's row lock (PostgreSQL) so that two requests checking for a duplicate
 * link or registration run one after the other; the unique indexes stay the last guard.
 * (SQLite transactions are exclusive already.)
 */
export async function lockPlatform(q: Queryable, platformId: string): Promise<void> {
  if (!onPostgres(q)) return;
  await q.selectFrom('platforms').select('id').where('id', '=', platformId).forUpdate().execute();
}

// ------------------------------------------------------------------------------- provider links

export async function insertLink(q: Queryable, row: LinkRow): Promise<void> {
  await q.insertInto('stablecoin_provider_accounts').values(row).execute();
}

export async function findLink(q: Queryable, platformId: string, id: string, forUpdate = false) {
  let query = q
    .selectFrom('stablecoin_provider_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findLinkByAccount(
  q: Queryable,
  platformId: string,
  key: { provider: string; environment: string; providerAccountId: string },
) {
  return q
    .selectFrom('stablecoin_provider_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('provider', '=', key.provider)
    .where('provider_environment', '=', key.environment)
    .where('provider_account_id', '=', key.providerAccountId)
    .executeTakeFirst();
}

/** The ids of the platform's ACTIVE links of a provider and environment (two at most: enough to tell one from several). */
/** The first two links of a provider and environment: only ACTIVE ones, or of any status. */
export async function linkIds(
  q: Queryable,
  platformId: string,
  provider: string,
  environment: string,
  onlyActive = true,
) {
  let query = q
    .selectFrom('stablecoin_provider_accounts')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('provider', '=', provider)
    .where('provider_environment', '=', environment);
  if (onlyActive) query = query.where('status', '=', 'ACTIVE');
  const rows = await query.orderBy('created_at').orderBy('id').limit(2).execute();
  return rows.map((row) => row.id);
}

export async function updateLink(
  q: Queryable,
  id: string,
  patch: Partial<
    Pick<LinkRow, 'status' | 'api_client_id' | 'sealed_client_secret' | 'last_verified_at' | 'updated_at'>
  >,
): Promise<void> {
  await q.updateTable('stablecoin_provider_accounts').set(patch).where('id', '=', id).execute();
}

export interface LinkFilters {
  provider?: string | undefined;
  status?: string | undefined;
}

export async function listLinks(q: Queryable, platformId: string, filters: LinkFilters, page: PageRequest) {
  let query = q.selectFrom('stablecoin_provider_accounts').selectAll().where('platform_id', '=', platformId);
  if (filters.provider !== undefined) query = query.where('provider', '=', filters.provider);
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  return paginate(query, 'stablecoin_provider_accounts', page);
}

// ------------------------------------------------------------------------------- stablecoins

export async function insertStablecoin(q: Queryable, row: StablecoinRow): Promise<void> {
  await q.insertInto('stablecoins').values(row).execute();
}

export async function findStablecoin(q: Queryable, platformId: string, id: string, forUpdate = false) {
  let query = q.selectFrom('stablecoins').selectAll().where('platform_id', '=', platformId).where('id', '=', id);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * Issuance statuses that end a registration without a stablecoin: its tokens may be
 * registered anew (the unique indexes of migration 0015 leave such rows out too).
 */
export const RETRYABLE_ISSUANCE_STATUSES = ['REJECTED', 'FAILED'];

/** A live registration (not REJECTED or FAILED) of the same token: by its network identifier on the platform, or its provider identifier on the link. */
export async function findDuplicateStablecoin(
  q: Queryable,
  platformId: string,
  key: { network: string; networkTokenIdentifier: string; linkId: string; providerTokenIdentifier: string },
) {
  return (
    q
      .selectFrom('stablecoins')
      .select(['id', 'network_token_identifier', 'provider_token_identifier'])
      .where('platform_id', '=', platformId)
      // A rejected or failed registration does not hold its tokens: they may be registered again.
      .where('issuance_status', 'not in', RETRYABLE_ISSUANCE_STATUSES)
      .where((eb) =>
        eb.or([
          eb.and([eb('network', '=', key.network), eb('network_token_identifier', '=', key.networkTokenIdentifier)]),
          eb.and([
            eb('stablecoin_provider_account_id', '=', key.linkId),
            eb('provider_token_identifier', '=', key.providerTokenIdentifier),
          ]),
        ]),
      )
      .executeTakeFirst()
  );
}

export async function updateStablecoin(
  q: Queryable,
  id: string,
  patch: Partial<Pick<StablecoinRow, 'issuance_status' | 'grid_operations_status' | 'currency' | 'updated_at'>>,
): Promise<void> {
  await q.updateTable('stablecoins').set(patch).where('id', '=', id).execute();
}

export interface StablecoinFilters {
  issuanceStatus?: string | undefined;
  gridOperationsStatus?: string | undefined;
  provider?: string | undefined;
}

export async function listStablecoins(q: Queryable, platformId: string, filters: StablecoinFilters, page: PageRequest) {
  let query = q.selectFrom('stablecoins').selectAll().where('platform_id', '=', platformId);
  if (filters.issuanceStatus !== undefined) query = query.where('issuance_status', '=', filters.issuanceStatus);
  if (filters.gridOperationsStatus !== undefined)
    query = query.where('grid_operations_status', '=', filters.gridOperationsStatus);
  if (filters.provider !== undefined) query = query.where('provider', '=', filters.provider);
  return paginate(query, 'stablecoins', page);
}

// ------------------------------------------------------------------------------- operations

export async function insertOperation(q: Queryable, row: OperationRow): Promise<void> {
  await q.insertInto('stablecoin_operations').values(row).execute();
}

export async function findOperation(q: Queryable, platformId: string, id: string, forUpdate = false) {
  let query = q
    .selectFrom('stablecoin_operations')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateOperation(
  q: Queryable,
  id: string,
  patch: Partial<Pick<OperationRow, 'status' | 'provider_status' | 'failure_reason' | 'updated_at'>>,
): Promise<void> {
  await q.updateTable('stablecoin_operations').set(patch).where('id', '=', id).execute();
}

export async function listOperations(
  q: Queryable,
  platformId: string,
  stablecoinId: string,
  filters: { operationType?: string | undefined },
  page: PageRequest,
) {
  let query = q
    .selectFrom('stablecoin_operations')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('stablecoin_id', '=', stablecoinId);
  if (filters.operationType !== undefined) query = query.where('operation_type', '=', filters.operationType);
  return paginate(query, 'stablecoin_operations', page);
}

/**
 * The cents a burn may still take: completed mints, less every burn not FAILED or EXPIRED
 * (a pending burn has claimed its part already). Sums of 64-bit cents, read as text.
 */
export async function burnableCents(q: Queryable, stablecoinId: string): Promise<bigint> {
  const result = await sql<{ minted: string | null; burned: string | null }>`
    SELECT
      CAST(SUM(CASE WHEN operation_type = 'MINT' AND status = 'COMPLETED' THEN fiat_amount ELSE 0 END) AS TEXT) AS minted,
      CAST(SUM(CASE WHEN operation_type = 'BURN' AND status NOT IN ('FAILED', 'EXPIRED') THEN fiat_amount ELSE 0 END) AS TEXT) AS burned
    FROM stablecoin_operations WHERE stablecoin_id = ${stablecoinId}`.execute(q);
  const row = result.rows[0];
  return BigInt(row?.minted ?? '0') - BigInt(row?.burned ?? '0');
}
