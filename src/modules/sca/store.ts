import type { Insertable, Selectable } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import type {
  ScaChallengesTable,
  ScaFactorsTable,
  ScaLoginStatesTable,
  ScaResetsTable,
  ScaSessionsTable,
  ScaTrustedBeneficiariesTable,
} from '../../db/schema.js';

export type FactorRow = Selectable<ScaFactorsTable>;
export type ChallengeRow = Selectable<ScaChallengesTable>;
export type LoginStateRow = Selectable<ScaLoginStatesTable>;
export type SessionRow = Selectable<ScaSessionsTable>;
export type ResetRow = Selectable<ScaResetsTable>;

// ------------------------------------------------------------------------------- factors

export async function listFactors(q: Queryable, platformId: string, customerId: string): Promise<FactorRow[]> {
  return q
    .selectFrom('sca_factors')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function insertFactor(q: Queryable, row: Insertable<ScaFactorsTable>): Promise<void> {
  await q.insertInto('sca_factors').values(row).execute();
}

export async function deleteFactor(q: Queryable, platformId: string, id: string): Promise<void> {
  await q.deleteFrom('sca_factors').where('platform_id', '=', platformId).where('id', '=', id).execute();
}

// ------------------------------------------------------------------------------- challenges

export async function insertChallenge(q: Queryable, row: Insertable<ScaChallengesTable>): Promise<void> {
  await q.insertInto('sca_challenges').values(row).execute();
}

/** The customer's unused challenges for `purpose`, newest first, locked to be used. */
export async function openChallenges(
  q: Queryable,
  platformId: string,
  customerId: string,
  purpose: string,
  nowIso: string,
): Promise<ChallengeRow[]> {
  let query = q
    .selectFrom('sca_challenges')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(20);
  if (onPostgres(q)) query = query.forUpdate();
  return query.execute();
}

/** Marks a challenge used; false when another request used it first. */
export async function useChallenge(q: Queryable, id: string, nowIso: string): Promise<boolean> {
  const result = await q
    .updateTable('sca_challenges')
    .set({ used_at: nowIso })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ------------------------------------------------------------------------------- login security

/** The customer's login-security state, locked (a row is made on first use). */
export async function lockLoginState(
  q: Queryable,
  platformId: string,
  customerId: string,
  nowIso: string,
): Promise<LoginStateRow> {
  await q
    .insertInto('sca_login_states')
    .values({
      platform_id: platformId,
      customer_id: customerId,
      failed_attempts: 0,
      locked_until: null,
      suspended: 0,
      updated_at: nowIso,
    })
    .onConflict((oc) => oc.columns(['platform_id', 'customer_id']).doNothing())
    .execute();
  let query = q
    .selectFrom('sca_login_states')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId);
  if (onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirstOrThrow();
}

export async function saveLoginState(q: Queryable, row: LoginStateRow): Promise<void> {
  await q
    .updateTable('sca_login_states')
    .set({
      failed_attempts: row.failed_attempts,
      locked_until: row.locked_until,
      suspended: row.suspended,
      updated_at: row.updated_at,
    })
    .where('platform_id', '=', row.platform_id)
    .where('customer_id', '=', row.customer_id)
    .execute();
}

// ------------------------------------------------------------------------------- sessions

export async function insertSession(q: Queryable, row: Insertable<ScaSessionsTable>): Promise<void> {
  await q.insertInto('sca_sessions').values(row).execute();
}

export async function revokeSessions(q: Queryable, platformId: string, customerId: string, nowIso: string) {
  await q
    .updateTable('sca_sessions')
    .set({ revoked_at: nowIso })
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** The customer's SCA session that is live at `nowIso`, if any. */
export async function liveSession(q: Queryable, platformId: string, customerId: string, nowIso: string) {
  return q
    .selectFrom('sca_sessions')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .orderBy('expires_at', 'desc')
    .executeTakeFirst();
}

export async function updateFactorTotpStep(q: Queryable, platformId: string, id: string, step: number) {
  await q
    .updateTable('sca_factors')
    .set({ last_totp_step: step })
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .execute();
}

export async function updateFactorPasskey(q: Queryable, platformId: string, id: string, passkey: string) {
  await q
    .updateTable('sca_factors')
    .set({ passkey })
    .where('platform_id', '=', platformId)
    .where('id', '=', id)
    .execute();
}

// ------------------------------------------------------------------------------- trusted beneficiaries

/** Whether `customerId` trusts the account (another customer's trust in it counts for nothing here). */
export async function isTrusted(
  q: Queryable,
  platformId: string,
  customerId: string,
  externalAccountId: string,
): Promise<boolean> {
  const row = await q
    .selectFrom('sca_trusted_beneficiaries')
    .select('external_account_id')
    .where('platform_id', '=', platformId)
    .where('external_account_id', '=', externalAccountId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function trust(q: Queryable, row: Insertable<ScaTrustedBeneficiariesTable>): Promise<void> {
  await q
    .insertInto('sca_trusted_beneficiaries')
    .values(row)
    .onConflict((oc) => oc.columns(['platform_id', 'external_account_id']).doNothing())
    .execute();
}

export async function untrust(q: Queryable, platformId: string, externalAccountId: string): Promise<void> {
  await q
    .deleteFrom('sca_trusted_beneficiaries')
    .where('platform_id', '=', platformId)
    .where('external_account_id', '=', externalAccountId)
    .execute();
}

// ------------------------------------------------------------------------------- 2FA resets

export async function insertReset(q: Queryable, row: ResetRow): Promise<void> {
  await q.insertInto('sca_resets').values(row).execute();
}

/** When the customer's resets started since `sinceIso`, oldest first. */
export async function resetsSince(q: Queryable, platformId: string, customerId: string, sinceIso: string) {
  const rows = await q
    .selectFrom('sca_resets')
    .select('created_at')
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('created_at', '>', sinceIso)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => row.created_at);
}

export async function findReset(q: Queryable, platformId: string, id: string, forUpdate = false) {
  let query = q.selectFrom('sca_resets').selectAll().where('platform_id', '=', platformId).where('id', '=', id);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** A reset by the hash of its liveness token (the liveness page names no platform). */
export async function findResetByToken(q: Queryable, tokenHash: string, forUpdate = false) {
  let query = q.selectFrom('sca_resets').selectAll().where('liveness_token_hash', '=', tokenHash);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateReset(
  q: Queryable,
  id: string,
  patch: Partial<Pick<ResetRow, 'status' | 'completed_at' | 'updated_at'>>,
): Promise<void> {
  await q.updateTable('sca_resets').set(patch).where('id', '=', id).execute();
}

export async function deleteFactorsOf(q: Queryable, platformId: string, customerId: string, factor: string) {
  await q
    .deleteFrom('sca_factors')
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('factor', '=', factor)
    .execute();
}
