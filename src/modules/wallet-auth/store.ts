import type { Selectable } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import type {
  DelegatedKeysTable,
  WalletCredentialsTable,
  WalletOrgsTable,
  WalletRequestsTable,
  WalletSessionsTable,
} from '../../db/schema.js';

export type CredentialRow = Selectable<WalletCredentialsTable>;
export type SessionRow = WalletSessionsTable;
export type RequestRow = WalletRequestsTable;
export type DelegatedKeyRow = DelegatedKeysTable;
export type WalletOrgRow = WalletOrgsTable;

// ------------------------------------------------------------------------------- org

export async function findOrg(q: Queryable, platformId: string): Promise<WalletOrgRow | undefined> {
  return q.selectFrom('wallet_orgs').selectAll().where('platform_id', '=', platformId).executeTakeFirst();
}

/** Inserts the org unless one exists (two first uses race: the first one stays). */
export async function insertOrg(q: Queryable, row: WalletOrgRow): Promise<void> {
  await q
    .insertInto('wallet_orgs')
    .values(row)
    .onConflict((oc) => oc.column('platform_id').doNothing())
    .execute();
}

// ------------------------------------------------------------------------------- credentials

/**
 * Serializes changes to one wallet's credentials (on PostgreSQL a row lock on the wallet's
 * internal account; SQLite transactions are exclusive already), so checks such as "the
 * first credential" or "not the last one" hold until the transaction ends.
 */
export async function lockWallet(q: Queryable, platformId: string, accountId: string): Promise<void> {
  if (!onPostgres(q)) return;
  await q
    .selectFrom('internal_accounts')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('id', '=', accountId)
    .forUpdate()
    .execute();
}

export async function insertCredential(q: Queryable, row: WalletCredentialsTable): Promise<void> {
  await q.insertInto('wallet_credentials').values(row).execute();
}

export async function findCredential(
  q: Queryable,
  platformId: string,
  id: string,
  forUpdate = false,
): Promise<CredentialRow | undefined> {
  let query = q
    .selectFrom('wallet_credentials')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function accountCredentials(
  q: Queryable,
  platformId: string,
  accountId: string,
): Promise<CredentialRow[]> {
  return q
    .selectFrom('wallet_credentials')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function registrationChallengeUsed(q: Queryable, platformId: string, challenge: string): Promise<boolean> {
  const row = await q
    .selectFrom('wallet_credentials')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('registration_challenge', '=', challenge)
    .executeTakeFirst();
  return row !== undefined;
}

export async function updateCredential(
  q: Queryable,
  platformId: string,
  id: string,
  patch: Partial<
    Pick<
      WalletCredentialsTable,
      'otp_target_key' | 'otp_expires_at' | 'otp_failed_attempts' | 'passkey' | 'revoked_at' | 'nickname' | 'updated_at'
    >
  >,
): Promise<void> {
  await q
    .updateTable('wallet_credentials')
    .set(patch)
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .execute();
}

export async function countFailedOtp(q: Queryable, platformId: string, id: string): Promise<void> {
  await q
    .updateTable('wallet_credentials')
    .set((eb) => ({ otp_failed_attempts: eb('otp_failed_attempts', '+', 1) }))
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .execute();
}

// ------------------------------------------------------------------------------- sessions

export async function insertSession(q: Queryable, row: SessionRow): Promise<void> {
  await q.insertInto('wallet_sessions').values(row).execute();
}

/** The session unless it was revoked or has expired at `nowIso`. */
export async function findLiveSession(
  q: Queryable,
  platformId: string,
  id: string,
  nowIso: string,
): Promise<SessionRow | undefined> {
  return q
    .selectFrom('wallet_sessions')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .executeTakeFirst();
}

export async function liveSessions(
  q: Queryable,
  platformId: string,
  accountId: string,
  nowIso: string,
): Promise<SessionRow[]> {
  return q
    .selectFrom('wallet_sessions')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function revokeSessions(
  q: Queryable,
  platformId: string,
  where: { id?: string; credentialId?: string },
  nowIso: string,
): Promise<void> {
  let query = q
    .updateTable('wallet_sessions')
    .set({ revoked_at: nowIso, updated_at: nowIso })
    .where('platform_id', '=', platformId)
    .where('revoked_at', 'is', null);
  if (where.id !== undefined) query = query.where('id', '=', where.id);
  if (where.credentialId !== undefined) query = query.where('credential_id', '=', where.credentialId);
  await query.execute();
}

// ------------------------------------------------------------------------------- pending requests

export async function insertRequest(q: Queryable, row: RequestRow): Promise<void> {
  await q.insertInto('wallet_requests').values(row).execute();
}

export async function findRequest(q: Queryable, platformId: string, id: string): Promise<RequestRow | undefined> {
  return q
    .selectFrom('wallet_requests')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Marks the request used; false when another retry used it first. */
export async function useRequest(q: Queryable, platformId: string, id: string, nowIso: string): Promise<boolean> {
  const result = await q
    .updateTable('wallet_requests')
    .set({ used_at: nowIso })
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ------------------------------------------------------------------------------- delegated keys

export async function findDelegatedKey(
  q: Queryable,
  platformId: string,
  id: string,
): Promise<DelegatedKeyRow | undefined> {
  return q
    .selectFrom('delegated_keys')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listDelegatedKeys(
  q: Queryable,
  platformId: string,
  filters: { accountId?: string | undefined; fundingSourceId?: string | undefined },
): Promise<DelegatedKeyRow[]> {
  let query = q.selectFrom('delegated_keys').selectAll().where('platform_id', '=', platformId);
  if (filters.accountId !== undefined) query = query.where('account_id', '=', filters.accountId);
  if (filters.fundingSourceId !== undefined) query = query.where('funding_source_id', '=', filters.fundingSourceId);
  return query.orderBy('created_at').orderBy('id').execute();
}

export async function insertDelegatedKey(q: Queryable, row: DelegatedKeyRow): Promise<void> {
  await q.insertInto('delegated_keys').values(row).execute();
}

/** The ACTIVE key of a card's funding source, if any. */
export async function activeDelegatedKey(q: Queryable, platformId: string, cardId: string, accountId: string) {
  return q
    .selectFrom('delegated_keys')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('card_id', '=', cardId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'ACTIVE')
    .executeTakeFirst();
}

export async function setDelegatedKeyStatus(
  q: Queryable,
  platformId: string,
  id: string,
  status: string,
  nowIso: string,
): Promise<void> {
  await q
    .updateTable('delegated_keys')
    .set({ status, updated_at: nowIso })
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .execute();
}
