import type { Selectable } from 'kysely';
import { onPostgres, type Queryable } from '../../db/index.js';
import type { InvitationsTable } from '../../db/schema.js';

export type InvitationRow = Selectable<InvitationsTable>;

export async function insertInvitation(q: Queryable, row: InvitationRow): Promise<void> {
  await q.insertInto('invitations').values(row).execute();
}

/** An invitation by its code, whichever platform made it (another platform's customer claims it). */
export async function findInvitation(q: Queryable, code: string, forUpdate = false) {
  let query = q.selectFrom('invitations').selectAll().where('code', '=', code);
  if (forUpdate && onPostgres(q)) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Moves a PENDING invitation on; false when it is no longer PENDING (a concurrent claim or cancel won). */
export async function settleInvitation(
  q: Queryable,
  code: string,
  patch: Partial<Pick<InvitationRow, 'status' | 'invitee_uma' | 'claimed_at' | 'updated_at'>>,
): Promise<boolean> {
  const result = await q
    .updateTable('invitations')
    .set(patch)
    .where('code', '=', code)
    .where('status', '=', 'PENDING')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
