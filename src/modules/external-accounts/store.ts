import { onPostgres, type Queryable } from '../../db/index.js';
import { paginate, type PageRequest } from '../../db/pagination.js';
import type { PrefetchRead } from '../../db/prefetch.js';
import { prepare, preparedInsert } from '../../db/prepared.js';
import type { ExternalAccountsTable, OwnershipChallengesTable } from '../../db/schema.js';

export type ExternalAccountRow = ExternalAccountsTable;
export type ChallengeRow = OwnershipChallengesTable;

/** Whose accounts: the platform's own (customerId null) or one customer's. */
export interface Owner {
  platformId: string;
  customerId: string | null;
}

export function ownerKey(owner: Owner): string {
  return owner.customerId ?? 'platform';
}

const COLUMNS = [
  'id',
  'platform_id',
  'customer_id',
  'owner_key',
  'status',
  'currency',
  'account_type',
  'account_info',
  'identity_key',
  'platform_account_id',
  'ownership_type',
  'default_uma_deposit',
  'beneficiary_verification_status',
  'beneficiary_verified_name',
  'created_at',
  'updated_at',
  'deleted_at',
] as const;

const insertRow = preparedInsert('external_accounts', COLUMNS);

export async function insertExternalAccount(q: Queryable, row: ExternalAccountRow): Promise<void> {
  await insertRow.one(q, row);
}

const byIdentity = prepare<{ platformId: string; ownerKey: string; identityKey: string }, ExternalAccountRow>(
  (k, param) =>
    k
      .selectFrom('external_accounts')
      .selectAll()
      .where('platform_id', '=', param('platformId'))
      .where('owner_key', '=', param('ownerKey'))
      .where('identity_key', '=', param('identityKey'))
      .where('deleted_at', 'is', null),
);

export async function findLiveByIdentity(
  q: Queryable,
  owner: Owner,
  identityKey: string,
): Promise<ExternalAccountRow | undefined> {
  return byIdentity.first(q, { platformId: owner.platformId, ownerKey: ownerKey(owner), identityKey });
}

/**
 * Which accounts an operation may see: the platform's own (customerId null), one customer's,
 * any customer's, or any account of the platform.
 */
export type AccountScope = { customerId: string | null } | 'anyCustomer' | 'any';

type ByIdParams = { platformId: string; id: string; customerId?: string };

// biome-ignore lint/suspicious/noExplicitAny: a placeholder stands for a value of any column type
const liveById = (k: Queryable, param: (name: string) => any) =>
  k
    .selectFrom('external_accounts')
    .selectAll()
    .where('platform_id', '=', param('platformId'))
    .where('id', '=', param('id'))
    .where('deleted_at', 'is', null);

const byIdAny = prepare<ByIdParams, ExternalAccountRow>((k, param) => liveById(k, param));
const byIdAnyCustomer = prepare<ByIdParams, ExternalAccountRow>((k, param) =>
  liveById(k, param).where('customer_id', 'is not', null),
);
const byIdPlatform = prepare<ByIdParams, ExternalAccountRow>((k, param) =>
  liveById(k, param).where('customer_id', 'is', null),
);
const byIdCustomer = prepare<ByIdParams, ExternalAccountRow>((k, param) =>
  liveById(k, param).where('customer_id', '=', param('customerId')),
);

const byIdAnyShared = prepare<ByIdParams, ExternalAccountRow>((k, param) => liveById(k, param).forShare());

/**
 * A live external account of the platform. `lock` (scope 'any'): read under a share lock on
 * PostgreSQL, held until the transaction ends, for a payment made with it now: a delete (or
 * any other change) waits for the payment, or the payment sees it. SQLite transactions are
 * exclusive already.
 */
export async function findExternalAccount(
  q: Queryable,
  platformId: string,
  id: string,
  scope: AccountScope,
  lock = false,
): Promise<ExternalAccountRow | undefined> {
  if (scope === 'any') return (lock && onPostgres(q) ? byIdAnyShared : byIdAny).first(q, { platformId, id });
  if (scope === 'anyCustomer') return byIdAnyCustomer.first(q, { platformId, id });
  if (scope.customerId === null) return byIdPlatform.first(q, { platformId, id });
  return byIdCustomer.first(q, { platformId, id, customerId: scope.customerId });
}

/**
 * The read of findExternalAccount with scope 'any', for prefetch() (db/prefetch.ts), which
 * prefetches on PostgreSQL only: `lock` is the share lock there.
 */
export function externalAccountRead(platformId: string, id: string, lock = false): PrefetchRead {
  return (lock ? byIdAnyShared : byIdAny).read({ platformId, id });
}

export interface ExternalAccountFilters {
  currency?: string | undefined;
  /** null: platform accounts; a customer id; 'anyCustomer'; or 'any' (every account of the platform). */
  customerId: string | null | 'anyCustomer' | 'any';
}

export async function listExternalAccounts(
  q: Queryable,
  platformId: string,
  filters: ExternalAccountFilters,
  page: PageRequest,
) {
  let query = q
    .selectFrom('external_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('deleted_at', 'is', null);
  if (filters.customerId === null) query = query.where('customer_id', 'is', null);
  else if (filters.customerId === 'anyCustomer') query = query.where('customer_id', 'is not', null);
  else if (filters.customerId !== 'any') query = query.where('customer_id', '=', filters.customerId);
  if (filters.currency !== undefined) query = query.where('currency', '=', filters.currency);
  return paginate(query, 'external_accounts', page);
}

export async function updateExternalAccount(
  q: Queryable,
  id: string,
  changes: Partial<Pick<ExternalAccountRow, 'status' | 'default_uma_deposit' | 'deleted_at' | 'updated_at'>>,
): Promise<void> {
  await q.updateTable('external_accounts').set(changes).where('id', '=', id).execute();
}

/**
 * The owner's live account flagged as the default for incoming UMA payments, if any (the
 * newest, should two concurrent creations have both kept the flag).
 */
export async function findDefaultUmaDeposit(q: Queryable, owner: Owner): Promise<ExternalAccountRow | undefined> {
  return q
    .selectFrom('external_accounts')
    .selectAll()
    .where('platform_id', '=', owner.platformId)
    .where('owner_key', '=', ownerKey(owner))
    .where('default_uma_deposit', '=', 1)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Clears the default UMA deposit flag on the owner's other accounts. */
export async function clearDefaultUmaDeposit(q: Queryable, owner: Owner, now: string): Promise<void> {
  await q
    .updateTable('external_accounts')
    .set({ default_uma_deposit: 0, updated_at: now })
    .where('platform_id', '=', owner.platformId)
    .where('owner_key', '=', ownerKey(owner))
    .where('default_uma_deposit', '=', 1)
    .execute();
}

export async function insertChallenge(q: Queryable, row: ChallengeRow): Promise<void> {
  await q.insertInto('ownership_challenges').values(row).execute();
}

export async function abandonPendingChallenges(q: Queryable, accountId: string, now: string): Promise<void> {
  await q
    .updateTable('ownership_challenges')
    .set({ status: 'ABANDONED', updated_at: now })
    .where('external_account_id', '=', accountId)
    .where('status', '=', 'PENDING')
    .execute();
}

export async function latestPendingChallenge(q: Queryable, accountId: string): Promise<ChallengeRow | undefined> {
  return q
    .selectFrom('ownership_challenges')
    .selectAll()
    .where('external_account_id', '=', accountId)
    .where('status', '=', 'PENDING')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function findChallenge(q: Queryable, id: string): Promise<ChallengeRow | undefined> {
  return q.selectFrom('ownership_challenges').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setChallengeStatus(q: Queryable, id: string, status: string, now: string): Promise<void> {
  await q.updateTable('ownership_challenges').set({ status, updated_at: now }).where('id', '=', id).execute();
}
