import type { Queryable } from '../../db/index.js';
import type { IncomingPaymentApprovalsTable } from '../../db/schema.js';

export type ApprovalRow = IncomingPaymentApprovalsTable;

/** Statuses in which the platform may still decide. */
export const OPEN_STATUSES = ['AWAITING_WEBHOOK', 'AWAITING_DECISION'] as const;

export async function findApproval(
  q: Queryable,
  platformId: string,
  transactionId: string,
): Promise<ApprovalRow | undefined> {
  return q
    .selectFrom('incoming_payment_approvals')
    .selectAll()
    .where('transaction_id', '=', transactionId)
    .where('platform_id', '=', platformId)
    .executeTakeFirst();
}

/** A new round of asking: inserts the approval, or replaces a closed one of the same transaction. */
export async function putApproval(q: Queryable, row: ApprovalRow, replace: boolean): Promise<void> {
  if (!replace) {
    await q.insertInto('incoming_payment_approvals').values(row).execute();
    return;
  }
  const { transaction_id: transactionId, ...rest } = row;
  await q.updateTable('incoming_payment_approvals').set(rest).where('transaction_id', '=', transactionId).execute();
}

/** Moves an approval on only from one of `from`; false when another decision got there first. */
export async function moveApproval(
  q: Queryable,
  transactionId: string,
  from: readonly string[],
  changes: Partial<
    Pick<ApprovalRow, 'status' | 'decision_deadline' | 'decided_by' | 'decision' | 'decided_at' | 'updated_at'>
  >,
): Promise<boolean> {
  const result = await q
    .updateTable('incoming_payment_approvals')
    .set(changes)
    .where('transaction_id', '=', transactionId)
    .where('status', 'in', [...from])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
